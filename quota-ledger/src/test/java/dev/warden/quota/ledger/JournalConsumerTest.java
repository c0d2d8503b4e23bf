package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.journal.Compensation;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.ledger.journal.QuarantinedEntry;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The journal consumer against real PostgreSQL and Redis. */
class JournalConsumerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static HikariDataSource ds;
    static String schema;

    @BeforeAll
    static void schema() {
        ds = Support.freshPostgres(postgres.server());
        schema = Support.schemaOf(ds);
    }

    @AfterAll
    static void close() {
        ds.close();
    }

    static String sql(String query) {
        return postgres.server().psql("SET search_path TO " + schema + "; " + query);
    }

    static long dbBalance(String account) {
        return Long.parseLong(sql("SELECT balance FROM ledger_accounts WHERE account = '" + account + "'"));
    }

    static RedisServer server() {
        return redis.server();
    }

    @Test
    @DisplayName("every change reaches the database once: balances equal Redis, one row per (account, request id), the journals are trimmed, and a second consumer redoes nothing")
    void movesEverything() {
        Support.Recorder recorder = new Support.Recorder();
        try (QuotaService quota = Support.quota(server());
             LedgerConsumer consumer = Support.consumer(server(), ds, "c-" + UUID.randomUUID()).listener(recorder).start()) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String a = "m-" + UUID.randomUUID();
                accounts.add(a);
                assertThat(quota.open(a, 1_000).isApplied()).isTrue();
            }
            for (int round = 0; round < 10; round++) {
                for (String a : accounts) {
                    assertThat(quota.deduct(a, 7, "d-" + a + "-" + round).isApplied()).isTrue();
                }
            }
            for (String a : accounts) {
                assertThat(quota.topUp(a, 50, "t-" + a).isApplied()).isTrue();
                assertThat(quota.refund(a, 3, "r-" + a).isApplied()).isTrue();
            }
            Support.drained(consumer);
            for (String a : accounts) {
                assertThat(dbBalance(a)).isEqualTo(quota.balance(a).orElseThrow()).isEqualTo(1_000 - 70 + 50 + 3);
                assertThat(sql("SELECT COUNT(*) FROM ledger_entries WHERE account = '" + a + "'")).isEqualTo("13");
            }
            assertThat(consumer.stats().applied()).isEqualTo(20 * 13);
            assertThat(consumer.stats().quarantined()).isZero();
            assertThat(recorder.batches).isNotEmpty();
            assertThat(recorder.batches.stream().mapToInt(LedgerListener.Batch::entries).max().orElseThrow())
                    .isLessThanOrEqualTo(50);
            Support.await("the lag hook reported", () -> !recorder.lags.isEmpty());
        }
        // What is in the database has left Redis: every journal is trimmed to nothing.
        for (int p = 0; p < LAYOUT.partitions(); p++) {
            assertThat(server().command("XLEN", LAYOUT.journal(p))).as("journal of partition " + p).isEqualTo(0L);
        }
        // A second consumer of the same group finds nothing to do.
        long rows = Long.parseLong(sql("SELECT COUNT(*) FROM ledger_entries"));
        String sums = sql("SELECT SUM(balance) FROM ledger_accounts");
        try (LedgerConsumer again = Support.consumer(server(), ds, "again").start()) {
            Support.drained(again);
            Support.await("the second consumer took every partition", () -> again.partitions().size() == LAYOUT.partitions());
            assertThat(again.stats().applied()).isZero();
            assertThat(again.stats().redelivered()).isZero();
        }
        assertThat(sql("SELECT COUNT(*) FROM ledger_entries")).isEqualTo(Long.toString(rows));
        assertThat(sql("SELECT SUM(balance) FROM ledger_accounts")).isEqualTo(sums);
    }

    @Test
    @DisplayName("the database stopped: the consumer retries with backoff, entries stay pending, and it catches up when the database returns")
    void databaseDown() {
        Support.Recorder recorder = new Support.Recorder();
        String a = "m-" + UUID.randomUUID();
        try (QuotaService quota = Support.quota(server());
             LedgerConsumer consumer = Support.consumer(server(), ds, "c-" + UUID.randomUUID()).listener(recorder).start()) {
            quota.open(a, 10_000);
            Support.drained(consumer);
            postgres.server().stop();
            try {
                for (int i = 0; i < 100; i++) {
                    assertThat(quota.deduct(a, 3, "down-" + a + "-" + i).isApplied()).isTrue();
                }
                Support.await("the consumer saw the database fail", () -> !recorder.databaseFailures.isEmpty());
                assertThat(consumer.backlog()).isPositive();
            } finally {
                postgres.server().restart();
            }
            Support.drained(consumer);
            assertThat(dbBalance(a)).isEqualTo(10_000 - 300).isEqualTo(quota.balance(a).orElseThrow());
            assertThat(sql("SELECT COUNT(*) FROM ledger_entries WHERE account = '" + a + "'")).isEqualTo("101");
            assertThat(consumer.stats().databaseRetries()).isPositive();
        }
    }

    @Test
    @DisplayName("a forged over-deduction: the CHECK refuses it, it is quarantined and reported, and the rest of its batch is applied")
    void forgedOverDeduction() {
        Support.Recorder recorder = new Support.Recorder();
        String victim = "m-" + UUID.randomUUID();
        String neighbour = neighbourOf(victim);
        try (QuotaService quota = Support.quota(server())) {
            String consumerName = "c-" + UUID.randomUUID();
            try (LedgerConsumer consumer = Support.consumer(server(), ds, consumerName).start()) {
                quota.open(victim, 100);
                quota.open(neighbour, 100);
                Support.drained(consumer);
            }
            // Behind the engine's back: the database says 10 where Redis says 100.
            sql("UPDATE ledger_accounts SET balance = 10 WHERE account = '" + victim + "'");
            assertThat(quota.deduct(neighbour, 5, "n1-" + neighbour).isApplied()).isTrue();
            assertThat(quota.deduct(victim, 50, "v-" + victim).isApplied()).isTrue();
            assertThat(quota.deduct(neighbour, 6, "n2-" + neighbour).isApplied()).isTrue();
            try (LedgerConsumer consumer = Support.consumer(server(), ds, consumerName).listener(recorder).start()) {
                Support.drained(consumer);
                // The entry is acknowledged before the counter moves: the backlog can reach zero first.
                Support.await("the forged entry counted as quarantined", () -> consumer.stats().quarantined() == 1);
                assertThat(consumer.stats().quarantined()).isEqualTo(1);
            }
            assertThat(recorder.batches).anySatisfy(b -> {
                assertThat(b.quarantined()).isEqualTo(1);
                assertThat(b.applied()).isEqualTo(2);
            });
            assertThat(recorder.quarantined).singleElement().satisfies(q -> {
                assertThat(q.reason()).isEqualTo(QuarantineReason.NEGATIVE_BALANCE);
                assertThat(q.account()).isEqualTo(victim);
                assertThat(q.fields()).containsEntry("amount", "50").containsEntry("request", "v-" + victim);
            });
            assertThat(dbBalance(victim)).isEqualTo(10);
            assertThat(dbBalance(neighbour)).isEqualTo(89);
            assertThat(sql("SELECT reason || ' ' || amount FROM ledger_quarantine WHERE account = '" + victim + "'"))
                    .isEqualTo("NEGATIVE_BALANCE 50");
            assertThat(Ledger.quarantine(ds, true)).anySatisfy(q -> assertThat(q.account()).isEqualTo(victim));
            try (Reconciler reconciler = Reconciler.create(Support.settings(server()), ds)) {
                ReconciliationReport report = reconciler.check();
                assertThat(report.unresolvedQuarantine()).isPositive();
                assertThat(report.drifted()).anySatisfy(d -> {
                    assertThat(d.account()).isEqualTo(victim);
                    assertThat(d.redisBalance()).hasValue(50);
                    assertThat(d.databaseBalance()).hasValue(10);
                    assertThat(d.difference()).isEqualTo(40);
                });
            }
            QuarantinedEntry q = recorder.quarantined.get(0);
            assertThat(Ledger.resolveQuarantined(ds, q.stream(), q.entryId(), "forged in a test")).isTrue();
            assertThat(Ledger.quarantine(ds, true)).noneSatisfy(x -> assertThat(x.account()).isEqualTo(victim));
        }
    }

    @Test
    @DisplayName("a retry after its idempotency record expired is applied twice by Redis; the consumer compensates and both sides converge")
    void expiredIdempotency() {
        Map<String, Object> settings = Support.settings(server());
        settings.put("warden.quota.idempotency-retention", "200ms");
        Support.Recorder recorder = new Support.Recorder();
        String a = "m-" + UUID.randomUUID();
        String request = "order-" + UUID.randomUUID();
        try (QuotaService quota = QuotaService.create(settings);
             LedgerConsumer consumer = Support.consumer(server(), ds, "c-" + UUID.randomUUID()).listener(recorder).start()) {
            quota.open(a, 1_000);
            assertThat(quota.deduct(a, 100, request)).isInstanceOf(Outcome.Applied.class);
            Support.await("the idempotency record expired",
                    () -> ((Long) server().command("EXISTS", LAYOUT.requestKey(a, request))) == 0L);
            assertThat(quota.deduct(a, 100, request)).isInstanceOf(Outcome.Applied.class);
            Support.await("the replay was compensated", () -> !recorder.compensations.isEmpty());
            Support.drained(consumer);
            Compensation c = recorder.compensations.get(0);
            assertThat(c.done()).isTrue();
            assertThat(c.replay().requestId()).isEqualTo(request);
            assertThat(quota.balance(a)).hasValue(900);
            assertThat(dbBalance(a)).isEqualTo(900);
            assertThat(sql("SELECT compensation_kind || ' ' || outcome FROM ledger_compensations WHERE account = '"
                    + a + "'")).isEqualTo("refund APPLIED");
            assertThat(sql("SELECT kind || ' ' || amount FROM ledger_entries WHERE request_id = '"
                    + c.compensationRequestId() + "'")).isEqualTo("refund 100");
            try (Reconciler reconciler = Reconciler.create(settings, ds)) {
                assertThat(reconciler.check().drifted()).noneSatisfy(d -> assertThat(d.account()).isEqualTo(a));
            }
        }
    }

    @Test
    @DisplayName("the same request id on two accounts, in the same partition and in another: all applied, all in the ledger, no compensation, reconciliation clean; a true replay is applied once")
    void requestIdsArePerAccount() {
        Support.Recorder recorder = new Support.Recorder();
        Map<String, Object> settings = Support.settings(server());
        try (QuotaService quota = Support.quota(server());
             LedgerConsumer consumer = Support.consumer(server(), ds, "per-account-" + UUID.randomUUID()).listener(recorder).start()) {
            String first = "merchant-1-" + UUID.randomUUID();
            String neighbour = neighbourOf(first);
            String elsewhere = outsidePartitionOf(first);
            String order = "order-9-" + UUID.randomUUID();
            for (String a : List.of(first, neighbour, elsewhere)) {
                assertThat(quota.open(a, 1_000).isApplied()).isTrue();
                assertThat(quota.deduct(a, 100, order).isApplied()).as(a).isTrue();
            }
            assertThat(quota.deduct(first, 100, order)).as("a true replay").isInstanceOf(Outcome.Duplicate.class);
            Support.drained(consumer);
            for (String a : List.of(first, neighbour, elsewhere)) {
                assertThat(dbBalance(a)).as(a).isEqualTo(900);
                assertThat(quota.balance(a)).hasValue(900);
                assertThat(sql("SELECT COUNT(*) FROM ledger_entries WHERE account = '" + a + "' AND request_id = '" + order + "'"))
                        .isEqualTo("1");
            }
            assertThat(sql("SELECT COUNT(*) FROM ledger_entries WHERE request_id = '" + order + "'")).isEqualTo("3");
            assertThat(recorder.compensations).isEmpty();
            assertThat(consumer.stats().compensated()).isZero();
            assertThat(sql("SELECT COUNT(*) FROM ledger_compensations WHERE request_id = '" + order + "'")).isEqualTo("0");
            try (Reconciler reconciler = Reconciler.create(settings, ds)) {
                ReconciliationReport report = reconciler.check();
                assertThat(report.drifted()).noneSatisfy(d -> assertThat(d.account()).isIn(first, neighbour, elsewhere));
            }
        }
    }

    @Test
    @DisplayName("configuration is checked up front and every problem is reported at once")
    void configuration() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> LedgerConsumer.builder(Map.of(), ds).batchSize(0)
                        .blockTime(Duration.ZERO).sweepInterval(Duration.ofSeconds(-1)).consumerName("a b").build())
                .isInstanceOf(dev.warden.quota.QuotaException.class)
                .hasMessageContaining("endpoint").hasMessageContaining("batchSize")
                .hasMessageContaining("blockTime").hasMessageContaining("sweepInterval").hasMessageContaining("consumerName")
                .satisfies(e -> assertThat(((dev.warden.quota.QuotaException) e).reason())
                        .isEqualTo(dev.warden.quota.QuotaException.Reason.CONFIGURATION));
    }

    static String outsidePartitionOf(String account) {
        while (true) {
            String other = "m-" + UUID.randomUUID();
            if (LAYOUT.partition(other) != LAYOUT.partition(account)) {
                return other;
            }
        }
    }

    /** Another account in the same partition, so both land in one batch. */
    static String neighbourOf(String account) {
        while (true) {
            String other = "m-" + UUID.randomUUID();
            if (LAYOUT.partition(other) == LAYOUT.partition(account)) {
                return other;
            }
        }
    }

    @Test
    @DisplayName("a consumer that died holding entries is claimed from, then forgotten by the group: no consumer entry is kept for good")
    void deadConsumersAreForgotten() {
        try (QuotaService quota = Support.quota(server())) {
            String a = "forgotten-" + UUID.randomUUID();
            quota.open(a, 100);
            quota.deduct(a, 1, "d1");
            String stream = LAYOUT.journalOf(a);
            try {
                server().command("XGROUP", "CREATE", stream, LedgerConsumer.DEFAULT_GROUP, "0", "MKSTREAM");
            } catch (RuntimeException exists) {
                // created by an earlier test
            }
            // A consumer reads the entries and dies before writing them: they are pending on it.
            server().command("XREADGROUP", "GROUP", LedgerConsumer.DEFAULT_GROUP, "dead-one", "COUNT", "100", "STREAMS", stream, ">");
            assertThat(consumers(stream)).contains("dead-one");
            try (LedgerConsumer consumer = Support.consumer(server(), ds, "c-" + UUID.randomUUID()).start()) {
                Support.drained(consumer);
                assertThat(dbBalance(a)).isEqualTo(99);
                Support.await("the dead consumer is forgotten once it holds nothing", () -> !consumers(stream).contains("dead-one"));
                assertThat(consumers(stream)).containsExactly(consumer.consumerName());
            }
        }
    }

    private static List<String> consumers(String stream) {
        List<String> names = new ArrayList<>();
        for (Object c : (List<?>) server().command("XINFO", "CONSUMERS", stream, LedgerConsumer.DEFAULT_GROUP)) {
            List<?> info = (List<?>) c;
            for (int i = 0; i + 1 < info.size(); i += 2) {
                if ("name".equals(String.valueOf(info.get(i)))) {
                    names.add(String.valueOf(info.get(i + 1)));
                }
            }
        }
        return names;
    }
}
