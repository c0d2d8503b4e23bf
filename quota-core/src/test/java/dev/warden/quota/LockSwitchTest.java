package dev.warden.quota;

import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A deployment moves the lock its charges take from Redis to etcd (issue 22). An account's fence mark keeps
 * the highest token it saw; Redis's tokens are its clock in microseconds, etcd's are revisions, so without
 * the next fencing epoch every fenced charge after the switch is refused. With it, every etcd token exceeds
 * every Redis one, and a service left on Redis is the one refused.
 */
class LockSwitchTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    static EtcdServer etcd;

    @BeforeAll
    static void start() {
        etcd = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        etcd.close();
    }

    static Map<String, Object> settings(String namespace, String backend, int epoch) {
        Map<String, Object> s = new HashMap<>(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.lock", backend, "warden.lock.namespace", namespace, "warden.lock.ttl", "10s",
                "warden.lock.connect-timeout", "20s", "warden.lock.fencing-epoch", Integer.toString(epoch)));
        if (backend.equals("etcd")) {
            s.put("warden.lock.endpoints", etcd.endpoints());
        }
        return s;
    }

    static Outcome charge(QuotaService quota, String account) {
        return quota.charge(account, "order-" + UUID.randomUUID(), balance -> 1);
    }

    @Test
    @DisplayName("Redis to etcd: refused without the next epoch, applied with it; a service left on Redis is refused")
    void redisToEtcdWithTheNextEpoch() {
        String namespace = "switch-" + UUID.randomUUID();
        String account = "m-" + UUID.randomUUID();
        try (QuotaService onRedis = QuotaService.create(settings(namespace, "redis", 0))) {
            onRedis.open(account, 1_000);
            for (int i = 0; i < 10; i++) {
                assertThat(charge(onRedis, account)).isInstanceOf(Outcome.Applied.class);
            }
        }
        try (QuotaService sameEpoch = QuotaService.create(settings(namespace, "etcd", 0))) {
            assertThat(charge(sameEpoch, account)).as("etcd's revision below Redis's clock-seeded mark")
                    .isInstanceOf(Outcome.StaleFence.class);
        }
        try (QuotaService onEtcd = QuotaService.create(settings(namespace, "etcd", 1))) {
            for (int i = 0; i < 10; i++) {
                assertThat(charge(onEtcd, account)).isInstanceOf(Outcome.Applied.class);
            }
        }
        try (QuotaService leftBehind = QuotaService.create(settings(namespace, "redis", 0))) {
            assertThat(charge(leftBehind, account)).as("a holder of the old epoch, after the first write of the new")
                    .isInstanceOf(Outcome.StaleFence.class);
            assertThat(leftBehind.balance(account)).hasValue(1_000 - 20);
        }
    }
}
