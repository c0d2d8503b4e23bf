package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ledger consumers' partition locks move from Redis to etcd (issue 22). Each partition's row keeps the
 * highest token that wrote to it; with the next fencing epoch every etcd token exceeds it and the new
 * consumer takes every partition on, never fenced out; a consumer left at the old epoch on etcd does not
 * open, and one left on Redis is fenced out.
 */
class LockSwitchLedgerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();
    static EtcdServer etcd;
    static HikariDataSource ds;
    static String schema;

    @BeforeAll
    static void start() {
        etcd = EtcdServer.start();
        ds = Support.freshPostgres(postgres.server());
        schema = Support.schemaOf(ds);
    }

    @AfterAll
    static void stop() {
        ds.close();
        etcd.close();
    }

    /** A consumer whose partition locks are etcd's at {@code epoch}; it records every fenced batch. */
    static LedgerConsumer onEtcd(int epoch, List<Integer> fenced) {
        Map<String, Object> settings = Support.settings(redis.server());
        settings.put("warden.lock.backend", "etcd");
        settings.put("warden.lock.endpoints", etcd.endpoints());
        settings.put("warden.lock.fencing-epoch", Integer.toString(epoch));
        return LedgerConsumer.builder(settings, ds).consumerName("etcd-" + epoch + "-" + UUID.randomUUID())
                .batchSize(50).blockTime(java.time.Duration.ofMillis(200)).sweepInterval(java.time.Duration.ofMillis(300))
                .rebalanceInterval(java.time.Duration.ofMillis(300))
                .retryBackoff(java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(500))
                .listener(new dev.warden.quota.ledger.consume.LedgerListener() {
                    @Override
                    public void fenced(int partition, long token) {
                        fenced.add(partition);
                    }
                }).build();
    }

    /**
     * A consumer of one step of a rolling switch from Redis to etcd, at epoch 0 throughout: {@code redis} (the
     * quota endpoint's Redis, the default), {@code migrating} (both locks, Redis first) or {@code etcd}.
     */
    static LedgerConsumer onStep(String step, HikariDataSource ds, List<Integer> fenced) {
        Map<String, Object> settings = Support.settings(redis.server());
        settings.put("warden.lock.namespace", "rolling");
        if (!step.equals("redis")) {
            settings.put("warden.lock.backend", "etcd");
            settings.put("warden.lock.endpoints", etcd.endpoints());
        }
        if (step.equals("migrating")) {
            settings.put("warden.lock.migrate-from", "redis");
            settings.put("warden.lock.migrate-from-endpoints", redis.server().uri());
        }
        return LedgerConsumer.builder(settings, ds).consumerName(step + "-" + UUID.randomUUID())
                .batchSize(50).blockTime(java.time.Duration.ofMillis(200)).sweepInterval(java.time.Duration.ofMillis(300))
                .rebalanceInterval(java.time.Duration.ofMillis(300))
                .retryBackoff(java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(500))
                .listener(new dev.warden.quota.ledger.consume.LedgerListener() {
                    @Override
                    public void fenced(int partition, long token) {
                        fenced.add(partition);
                    }
                }).build();
    }

    static long ledgerSum() {
        return ledgerSum(schema);
    }

    static long ledgerSum(String schema) {
        return Long.parseLong(postgres.server().psql("SET search_path TO " + schema
                + "; SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE kind = 'deduct'"));
    }

    static void deduct(QuotaService quota, List<String> accounts, int each) {
        for (String a : accounts) {
            for (int i = 0; i < each; i++) {
                assertThat(quota.deduct(a, 1, "d-" + UUID.randomUUID())).isInstanceOf(Outcome.Applied.class);
            }
        }
    }

    @Test
    @DisplayName("Redis to etcd partition locks with the next epoch: every entry reaches the database, no batch fenced;"
            + " a consumer left at the old epoch is refused at start on etcd and fenced out on Redis")
    void partitionLocksMoveToEtcd() {
        List<String> accounts = new java.util.ArrayList<>();
        try (QuotaService quota = Support.quota(redis.server())) {
            for (int i = 0; i < 32; i++) {
                String a = "switch-" + UUID.randomUUID();
                quota.open(a, 1_000);
                accounts.add(a);
            }
            try (LedgerConsumer onRedis = Support.consumer(redis.server(), ds, "redis-" + UUID.randomUUID()).start()) {
                deduct(quota, accounts, 2);
                Support.drained(onRedis);
            }
            assertThat(ledgerSum()).isEqualTo(64);

            List<Integer> fenced = new CopyOnWriteArrayList<>();
            try (LedgerConsumer next = onEtcd(1, fenced).start()) {
                deduct(quota, accounts, 2);
                Support.drained(next);
            }
            assertThat(fenced).as("batches of the next epoch fenced out").isEmpty();
            assertThat(ledgerSum()).isEqualTo(128);

            // A consumer started at the old epoch on etcd is refused as it opens: etcd recorded epoch 1.
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> onEtcd(0, new CopyOnWriteArrayList<>()).start().close())
                    .hasMessageContaining("warden.lock.fencing-epoch 0 is below 1");
            // One left behind on Redis at the old epoch opens (Redis saw no higher epoch), and the fence refuses it.
            List<Integer> stale = new CopyOnWriteArrayList<>();
            try (LedgerConsumer leftBehind = Support.consumer(redis.server(), ds, "redis-left-" + UUID.randomUUID())
                    .listener(new dev.warden.quota.ledger.consume.LedgerListener() {
                        @Override
                        public void fenced(int partition, long token) {
                            stale.add(partition);
                        }
                    }).build().start()) {
                deduct(quota, accounts, 1);
                Support.await("a consumer at the old epoch is fenced out", () -> !stale.isEmpty());
            }
            assertThat(ledgerSum()).as("nothing written under the old epoch").isEqualTo(128);
            try (LedgerConsumer heir = onEtcd(1, fenced).start()) {
                Support.drained(heir);
            }
            assertThat(ledgerSum()).isEqualTo(160);
            assertThat(fenced).isEmpty();
        }
    }

    @Test
    @DisplayName("a rolling switch of the partition locks, Redis → migrating → etcd and back, two steps side by side:"
            + " every entry reaches the database, no batch fenced")
    void rollingSwitchOfPartitionLocks() {
        String[][] rollout = {{"redis", "migrating"}, {"migrating", "etcd"}, {"etcd", "migrating"}, {"migrating", "redis"}};
        List<String> accounts = new java.util.ArrayList<>();
        List<Integer> fenced = new CopyOnWriteArrayList<>();
        // A schema of its own: its partitions' fences start from nothing, whatever the other test left.
        try (QuotaService quota = Support.quota(redis.server()); HikariDataSource own = Support.freshPostgres(postgres.server())) {
            String ownSchema = Support.schemaOf(own);
            for (int i = 0; i < 16; i++) {
                String a = "rolling-" + UUID.randomUUID();
                quota.open(a, 1_000);
                accounts.add(a);
            }
            long before = ledgerSum(ownSchema);
            long deducted = 0;
            for (String[] pair : rollout) {
                try (LedgerConsumer a = onStep(pair[0], own, fenced).start(); LedgerConsumer b = onStep(pair[1], own, fenced).start()) {
                    deduct(quota, accounts, 3);
                    deducted += 3L * accounts.size();
                    Support.drained(a);
                    Support.drained(b);
                }
                assertThat(fenced).as("batches fenced out with %s beside %s", pair[0], pair[1]).isEmpty();
                assertThat(ledgerSum(ownSchema) - before).isEqualTo(deducted);
            }
        }
    }
}
