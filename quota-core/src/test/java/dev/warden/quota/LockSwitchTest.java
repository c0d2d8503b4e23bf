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

    /** The middle step of a rolling switch: the etcd lock, taken after the Redis one. */
    static Map<String, Object> migrating(String namespace) {
        Map<String, Object> s = settings(namespace, "etcd", 0);
        s.put("warden.lock.migrate-from", "redis");
        s.put("warden.lock.migrate-from-endpoints", redis.server().uri());
        return s;
    }

    static Map<String, Object> settings(String namespace, String backend, int epoch) {
        Map<String, Object> s = new HashMap<>(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.lock", backend, "warden.lock.namespace", namespace, "warden.lock.ttl", "10s",
                "warden.lock.fencing-epoch", Integer.toString(epoch)));
        s.putAll(ConnectTimeouts.SETTINGS);
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

    @Test
    @DisplayName("a rolling switch Redis → migrating → etcd and back, two steps side by side charging one account: every charge applied")
    void rollingSwitchChargesEveryTime() throws Exception {
        String namespace = "rolling-" + UUID.randomUUID();
        String account = "m-" + UUID.randomUUID();
        Map<String, Map<String, Object>> steps = Map.of("redis", settings(namespace, "redis", 0),
                "migrating", migrating(namespace), "etcd", settings(namespace, "etcd", 0));
        String[][] rollout = {{"redis", "migrating"}, {"migrating", "etcd"}, {"etcd", "migrating"}, {"migrating", "redis"}};
        int perService = 15;
        long charged = 0;
        try (QuotaService opener = QuotaService.create(settings(namespace, "redis", 0))) {
            opener.open(account, 10_000);
        }
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            for (String[] pair : rollout) {
                try (QuotaService a = QuotaService.create(steps.get(pair[0])); QuotaService b = QuotaService.create(steps.get(pair[1]))) {
                    java.util.List<java.util.concurrent.Future<java.util.List<Outcome>>> runs = new java.util.ArrayList<>();
                    for (QuotaService q : java.util.List.of(a, b)) {
                        runs.add(pool.submit(() -> {
                            java.util.List<Outcome> outcomes = new java.util.ArrayList<>();
                            for (int i = 0; i < perService; i++) {
                                outcomes.add(charge(q, account));
                            }
                            return outcomes;
                        }));
                    }
                    for (var run : runs) {
                        assertThat(run.get(2, java.util.concurrent.TimeUnit.MINUTES)).as("%s beside %s", pair[0], pair[1])
                                .allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.Applied.class));
                        charged += perService;
                    }
                    assertThat(a.balance(account)).hasValue(10_000 - charged);
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(charged).isEqualTo(4L * 2 * perService);
    }
}
