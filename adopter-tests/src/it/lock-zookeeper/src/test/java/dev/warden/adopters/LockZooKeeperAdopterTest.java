package dev.warden.adopters;

import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.Smoke;
import dev.warden.adopters.support.ZooKeeperServer;
import dev.warden.lock.LockClient;
import org.junit.jupiter.api.Test;

import java.net.URI;

class LockZooKeeperAdopterTest {

    @Test
    void acquireFenceRelease() {
        try (ZooKeeperServer zookeeper = ZooKeeperServer.start();
             LockClient locks = LockClient.create(URI.create(zookeeper.uri()))) {
            Smoke.acquireFenceRelease(locks);
        }
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
