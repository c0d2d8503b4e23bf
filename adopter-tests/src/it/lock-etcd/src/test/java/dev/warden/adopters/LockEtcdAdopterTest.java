package dev.warden.adopters;

import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.Smoke;
import dev.warden.adopters.support.EtcdServer;
import dev.warden.lock.LockClient;
import org.junit.jupiter.api.Test;

import java.net.URI;

class LockEtcdAdopterTest {

    @Test
    void acquireFenceRelease() {
        try (EtcdServer etcd = EtcdServer.start();
             LockClient locks = LockClient.create(URI.create(etcd.uri()))) {
            Smoke.acquireFenceRelease(locks);
        }
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
