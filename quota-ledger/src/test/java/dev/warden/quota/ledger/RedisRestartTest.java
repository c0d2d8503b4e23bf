package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.reconcile.BootstrapReport;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Redis restarts: with the append-only file nothing acknowledged is lost; without persistence reconciliation finds the loss and the database restores Redis. */
class RedisRestartTest {

    @RegisterExtension
    static final RedisServerExtension durable = new RedisServerExtension(RedisServer.builder().appendOnly(true).appendFsyncAlways());
    @RegisterExtension
    static final RedisServerExtension volatileRedis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

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

    static long dbBalance(String account) {
        return Long.parseLong(postgres.server().psql("SET search_path TO " + schema
                + "; SELECT balance FROM ledger_accounts WHERE account = '" + account + "'"));
    }

    /** Retries a call with the same request id while Redis is away: the final outcome is what the caller saw. */
    static Outcome untilAnswered(Supplier<Outcome> call) {
        long end = System.nanoTime() + Support.DEADLINE.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (QuotaException e) {
                if (e.reason() != QuotaException.Reason.UNAVAILABLE || System.nanoTime() - end > 0) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
            }
        }
    }

    @Test
    @DisplayName("appendonly + appendfsync always: Redis killed mid-traffic and restarted; every acknowledged deduction reaches the database")
    void appendOnlyAlways() {
        RedisServer server = durable.server();
        Map<String, Long> acknowledged = new HashMap<>();
        List<String> accounts = new ArrayList<>();
        try (QuotaService quota = Support.quota(server);
             LedgerConsumer consumer = Support.consumer(server, ds, "c-" + UUID.randomUUID()).start()) {
            for (int i = 0; i < 10; i++) {
                String a = "aof-" + UUID.randomUUID();
                quota.open(a, 100_000);
                accounts.add(a);
                acknowledged.put(a, 0L);
            }
            for (int round = 0; round < 60; round++) {
                if (round == 30) {
                    server.kill();
                    server.restart();
                }
                for (String a : accounts) {
                    String request = "r-" + round + "-" + a;
                    Outcome o = untilAnswered(() -> quota.deduct(a, 11, request));
                    if (o.isApplied()) {
                        acknowledged.merge(a, 11L, Long::sum);
                    }
                }
            }
            Support.drained(consumer);
            assertThat(postgres.server().psql("SET search_path TO " + schema + "; SELECT COUNT(*) FROM ledger_quarantine"))
                    .as("quarantined: %s", postgres.server().psql("SET search_path TO " + schema
                            + "; SELECT stream || ' ' || entry_id || ' ' || reason || ' ' || detail FROM ledger_quarantine"))
                    .isEqualTo("0");
            for (String a : accounts) {
                assertThat(acknowledged.get(a)).isEqualTo(60 * 11);
                assertThat(quota.balance(a)).hasValue(100_000 - acknowledged.get(a));
                assertThat(dbBalance(a)).isEqualTo(100_000 - acknowledged.get(a));
            }
        }
    }

    @Test
    @DisplayName("no persistence: after an empty restart reconciliation names every account and its difference; bootstrap then repair restore Redis from the database")
    void emptyRestart() {
        RedisServer server = volatileRedis.server();
        Map<String, Object> settings = Support.settings(server);
        List<Integer> low = IntStream.range(0, 8).boxed().toList();
        List<Integer> high = IntStream.range(8, 16).boxed().toList();
        Map<String, Long> accounts = new LinkedHashMap<>();
        try (QuotaService quota = Support.quota(server);
             LedgerConsumer lowConsumer = Support.consumer(server, ds, "low").partitions(low).start()) {
            try (LedgerConsumer highConsumer = Support.consumer(server, ds, "high").partitions(high).start()) {
                for (int i = 0; i < 24; i++) {
                    String a = "vol-" + UUID.randomUUID();
                    quota.open(a, 1_000);
                    quota.deduct(a, 100, "first-" + a);
                    accounts.put(a, 900L);
                }
                Support.drained(lowConsumer);
                Support.drained(highConsumer);
            }
            // The high partitions' consumer is gone: these deductions exist only in Redis, then Redis dies.
            for (String a : accounts.keySet()) {
                assertThat(quota.deduct(a, 1, "lost-" + a).isApplied()).isTrue();
            }
            Support.drained(lowConsumer);
            server.kill();
            server.restart();

            String any = accounts.keySet().iterator().next();
            QuotaException lost = catchThrowableOfType(QuotaException.class,
                    () -> untilAnswered(() -> quota.deduct(any, 1, "after-" + any)));
            assertThat(lost.reason()).isEqualTo(QuotaException.Reason.DATA_LOST);

            try (Reconciler reconciler = Reconciler.create(settings, ds)) {
                ReconciliationReport report = untilReady(reconciler::check);
                assertThat(report.accountsChecked()).isGreaterThanOrEqualTo(accounts.size());
                assertThat(report.unpersistedEntries()).isZero();
                Map<String, ReconciliationReport.Drift> byAccount = new HashMap<>();
                report.drifted().forEach(d -> byAccount.put(d.account(), d));
                for (Map.Entry<String, Long> e : accounts.entrySet()) {
                    long db = LAYOUT.partition(e.getKey()) < 8 ? 899 : 900; // the low consumer saw "lost-" in time
                    assertThat(dbBalance(e.getKey())).isEqualTo(db);
                    ReconciliationReport.Drift d = byAccount.get(e.getKey());
                    assertThat(d).as(e.getKey()).isNotNull();
                    assertThat(d.redisBalance()).isEmpty();
                    assertThat(d.databaseBalance()).hasValue(db);
                    assertThat(d.expected()).hasValue(db);
                    assertThat(d.difference()).isEqualTo(-db);
                    assertThat(d.drained()).isTrue();
                    assertThat(report.partitionsWithoutMarker()).contains(LAYOUT.partition(e.getKey()));
                }

                BootstrapReport first = reconciler.bootstrap();
                assertThat(first.accountsLoaded()).isGreaterThanOrEqualTo(accounts.size());
                assertThat(first.markersWritten()).isEqualTo(16);
                BootstrapReport again = reconciler.bootstrap();
                assertThat(again.accountsLoaded()).isZero();
                assertThat(again.markersWritten()).isZero();
                assertThat(again.accountsPresent()).isEqualTo(first.accountsLoaded());
                ReconciliationReport afterBootstrap = reconciler.check();
                assertThat(afterBootstrap.drifted()).isEmpty();
                assertThat(afterBootstrap.partitionsWithoutMarker()).isEmpty();
                for (String a : accounts.keySet()) {
                    assertThat(quota.balance(a)).hasValue(dbBalance(a));
                }

                // Drift three accounts behind the engine's back: reported exactly, repaired only when asked.
                List<String> three = new ArrayList<>(accounts.keySet()).subList(0, 3);
                server.command("HSET", LAYOUT.accountKey(three.get(0)), "balance", "5");
                server.command("HINCRBY", LAYOUT.accountKey(three.get(1)), "balance", "250");
                server.command("DEL", LAYOUT.accountKey(three.get(2)));
                ReconciliationReport drifted = reconciler.check();
                assertThat(drifted.drifted()).extracting(ReconciliationReport.Drift::account)
                        .containsExactlyInAnyOrderElementsOf(three);
                Map<String, Long> differences = new HashMap<>();
                drifted.drifted().forEach(d -> differences.put(d.account(), d.difference()));
                assertThat(differences).containsEntry(three.get(0), 5 - dbBalance(three.get(0)))
                        .containsEntry(three.get(1), 250L).containsEntry(three.get(2), -dbBalance(three.get(2)));

                RepairReport dryRun = reconciler.repair(false);
                assertThat(dryRun.applied()).isFalse();
                assertThat(dryRun.repairs()).hasSize(3).allSatisfy(r -> assertThat(r.status()).isEqualTo(RepairReport.Status.PLANNED));
                assertThat(server.command("HGET", LAYOUT.accountKey(three.get(0)), "balance")).isEqualTo("5");

                RepairReport applied = reconciler.repair(true);
                assertThat(applied.repairs()).hasSize(3).allSatisfy(r -> assertThat(r.status()).isEqualTo(RepairReport.Status.APPLIED));
                assertThat(reconciler.check().drifted()).isEmpty();
                assertThat(quota.balance(three.get(2))).hasValue(dbBalance(three.get(2)));
            }

            // Traffic resumes; the low consumer recreated its group after NOGROUP, a new one takes the high partitions.
            try (LedgerConsumer highAgain = Support.consumer(server, ds, "high-2").partitions(high).start()) {
                for (String a : accounts.keySet()) {
                    assertThat(quota.deduct(a, 10, "resumed-" + a).isApplied()).isTrue();
                }
                Support.drained(lowConsumer);
                Support.drained(highAgain);
                for (String a : accounts.keySet()) {
                    assertThat(quota.balance(a)).hasValue(dbBalance(a));
                }
            }
        }
    }

    static <T> T untilReady(Supplier<T> call) {
        long end = System.nanoTime() + Support.DEADLINE.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (QuotaException e) {
                if (e.reason() != QuotaException.Reason.UNAVAILABLE || System.nanoTime() - end > 0) {
                    throw e;
                }
            }
        }
    }
}
