package dev.warden.adopters;

import dev.warden.adopters.support.EtcdServer;
import dev.warden.adopters.support.NettyOnClassPath;
import dev.warden.adopters.support.Smoke;
import dev.warden.adopters.support.RedisServer;
import dev.warden.adopters.support.ZooKeeperServer;
import dev.warden.lock.LockClient;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** Every backend and quota-core on one class path, versions from warden-bom. */
class BomAdopterTest {

    @Test
    void redisLock() {
        try (RedisServer redis = RedisServer.start();
             LockClient locks = LockClient.create(URI.create(redis.uri()))) {
            Smoke.acquireFenceRelease(locks);
        }
    }

    @Test
    void etcdLock() {
        try (EtcdServer etcd = EtcdServer.start();
             LockClient locks = LockClient.create(URI.create(etcd.uri()))) {
            Smoke.acquireFenceRelease(locks);
        }
    }

    @Test
    void zooKeeperLock() {
        try (ZooKeeperServer zookeeper = ZooKeeperServer.start();
             LockClient locks = LockClient.create(URI.create(zookeeper.uri()))) {
            Smoke.acquireFenceRelease(locks);
        }
    }

    @Test
    void quotaChargeUnderARedisLock() {
        try (RedisServer redis = RedisServer.start();
             QuotaService quota = QuotaService.create(Map.of(
                     "warden.quota.endpoint", redis.uri(),
                     "warden.quota.lock", "redis"))) {
            String account = "merchant-" + UUID.randomUUID();
            assertInstanceOf(Outcome.Applied.class, quota.open(account, 10_000));
            Outcome charged = quota.charge(account, "order-1", balance -> balance / 10);
            assertEquals(9_000, assertInstanceOf(Outcome.Applied.class, charged).balance());
        }
    }

    @Test
    void oneNettyVersionOnTheClassPath() {
        Smoke.oneNettyVersion(NettyOnClassPath.versions());
    }
}
