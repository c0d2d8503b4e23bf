package dev.warden.adopters;

import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.Smoke;
import dev.warden.adopters.support.RedisServer;
import dev.warden.lock.LockClient;
import org.junit.jupiter.api.Test;

import java.net.URI;

class LockRedisAdopterTest {

    @Test
    void acquireFenceRelease() {
        try (RedisServer redis = RedisServer.start();
             LockClient locks = LockClient.create(URI.create(redis.uri()))) {
            Smoke.acquireFenceRelease(locks);
        }
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
