package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Every path of a hold journaled, persisted by the consumer and reconciled: Redis's available + held == the database's. */
class HoldsLedgerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static RedisServer server() {
        return redis.server();
    }

    static long[] redisFigures(Tenant t, String account) {
        String available = (String) server().command("HGET", t.layout().accountKey(account), "balance");
        String held = (String) server().command("HGET", t.layout().accountKey(account), "held");
        return new long[]{Long.parseLong(available), held == null ? 0 : Long.parseLong(held)};
    }

    @Test
    @DisplayName("PostgreSQL: hold, partial and full capture, void, expiry, an open hold and every refusal are persisted and reconcile clean")
    void everyPathOnPostgres() throws SQLException {
        try (HikariDataSource pg = Support.freshPostgres(postgres.server())) { // a schema (and namespace) per test
            everyPath(pg);
        }
    }

    @Test
    @DisplayName("H2 (migrated to the latest version): the same")
    void everyPathOnH2() throws SQLException {
        DataSource h2 = Support.h2();
        assertThat(Ledger.migrate(h2)).isEqualTo("7");
        everyPath(h2);
    }

    private void everyPath(DataSource ds) throws SQLException {
        Tenant t = Tenant.fresh(server());
        try (QuotaService quota = t.quota();
             Reconciler reconciler = t.reconciler(ds)) {
            Map<String, String> accounts = new LinkedHashMap<>();
            for (String path : List.of("partial", "full", "void", "expiry", "open", "refused")) {
                String a = "h-" + path + "-" + UUID.randomUUID();
                quota.open(a, 1_000);
                accounts.put(path, a);
            }
            try (LedgerConsumer c = t.consumer(ds)) {
                Support.drained(c);
            }
            String partial = accounts.get("partial");
            assertThat(quota.hold(partial, 300, "h", Duration.ofHours(1))).isInstanceOf(HoldOutcome.Held.class);
            assertThat(quota.capture(partial, "h", 200)).isInstanceOf(HoldOutcome.Captured.class);
            assertThat(quota.capture(partial, "h", 200)).isInstanceOf(HoldOutcome.Duplicate.class);
            quota.deduct(partial, 50, "d1");

            String full = accounts.get("full");
            quota.hold(full, 300, "h", Duration.ofHours(1));
            assertThat(quota.capture(full, "h", 301)).isInstanceOf(HoldOutcome.ExceedsHold.class);
            assertThat(quota.capture(full, "h", 300)).isInstanceOf(HoldOutcome.Captured.class);
            assertThat(quota.release(full, "h")).isInstanceOf(HoldOutcome.AlreadyCaptured.class);

            String voided = accounts.get("void");
            quota.hold(voided, 300, "h", Duration.ofHours(1));
            assertThat(quota.release(voided, "h")).isInstanceOf(HoldOutcome.Released.class);
            assertThat(quota.capture(voided, "h", 1)).isInstanceOf(HoldOutcome.AlreadyReleased.class);

            String expiring = accounts.get("expiry");
            quota.hold(expiring, 300, "h", Duration.ofMillis(1));
            // Real time here (the engine's clock is the system's): expire it once it is due, waiting on the record.
            Support.await("the 1 ms hold expires", () -> {
                quota.expireHolds();
                return "expired".equals(server().command("HGET", t.layout().holdKey(expiring, "h"), "state"));
            });

            String open = accounts.get("open");
            quota.hold(open, 300, "h1", Duration.ofHours(1));
            quota.hold(open, 100, "h2", Duration.ofHours(1));

            String refused = accounts.get("refused");
            assertThat(quota.hold(refused, 1_001, "h", Duration.ofHours(1))).isInstanceOf(HoldOutcome.Insufficient.class);

            // In flight: the journal's tail counts, so nothing shows as drift before the consumer runs.
            assertThat(reconciler.check().drifted()).isEmpty();
            try (LedgerConsumer c = t.consumer(ds)) {
                Support.drained(c);
            }
            ReconciliationReport report = reconciler.check();
            assertThat(report.drifted()).isEmpty();
            assertThat(report.unresolvedQuarantine()).isZero();

            Map<String, long[]> expected = Map.of(partial, new long[]{750, 0}, full, new long[]{700, 0},
                    voided, new long[]{1_000, 0}, expiring, new long[]{1_000, 0}, open, new long[]{600, 400},
                    refused, new long[]{1_000, 0});
            long redisTotal = 0;
            long databaseTotal = 0;
            for (String a : accounts.values()) {
                long[] inRedis = redisFigures(t, a);
                long[] inDatabase = databaseFigures(ds, a);
                assertThat(inRedis).as("Redis available, held of %s", a).containsExactly(expected.get(a));
                assertThat(inDatabase).as("database balance, held of %s", a).containsExactly(expected.get(a));
                redisTotal += inRedis[0] + inRedis[1];
                databaseTotal += inDatabase[0] + inDatabase[1];
            }
            assertThat(redisTotal).isEqualTo(databaseTotal).isEqualTo(5_450);

            assertThat(entries(ds, partial)).containsExactly("open:", "hold:hold:h", "capture:capture:h",
                    "release:release:h", "deduct:d1");
            assertThat(entries(ds, full)).containsExactly("open:", "hold:hold:h", "capture:capture:h");
            assertThat(entries(ds, voided)).containsExactly("open:", "hold:hold:h", "release:release:h");
            assertThat(entries(ds, expiring)).containsExactly("open:", "hold:hold:h", "expire:expire:h");
            assertThat(entries(ds, open)).containsExactly("open:", "hold:hold:h1", "hold:hold:h2");
            assertThat(entries(ds, refused)).containsExactly("open:");
        }
    }

    @Test
    @DisplayName("captures racing expiries and voids on two threads: each hold ends once, and the ledger agrees account by account")
    void racesReconcileClean() throws Exception {
        Tenant t = Tenant.fresh(server());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = t.quota();
             Reconciler reconciler = t.reconciler(pg);
             LedgerConsumer consumer = t.consumer(pg)) {
            List<String> accounts = new ArrayList<>();
            long captured = 0;
            for (int round = 0; round < 60; round++) {
                String a = "race-" + round + "-" + UUID.randomUUID();
                quota.open(a, 1_000);
                accounts.add(a);
                // Due within a few ms on the system clock: whether the capture or the expiry comes first varies.
                quota.hold(a, 100, "h", Duration.ofMillis(1 + round % 3));
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                boolean voiding = round % 4 == 0;
                java.util.concurrent.Future<HoldOutcome> capture = pool.submit(() -> {
                    start.await(10, java.util.concurrent.TimeUnit.SECONDS);
                    return quota.capture(a, "h", 60);
                });
                java.util.concurrent.Future<Object> other = pool.submit(() -> {
                    start.await(10, java.util.concurrent.TimeUnit.SECONDS);
                    return voiding ? quota.release(a, "h") : (Object) quota.expireHolds();
                });
                HoldOutcome c = capture.get(30, java.util.concurrent.TimeUnit.SECONDS);
                Object o = other.get(30, java.util.concurrent.TimeUnit.SECONDS);
                if (c instanceof HoldOutcome.Captured) {
                    captured += 60;
                    assertThat(o).isNotInstanceOf(HoldOutcome.Released.class).isNotInstanceOf(HoldOutcome.Expired.class);
                } else {
                    assertThat(c).isInstanceOfAny(HoldOutcome.Expired.class, HoldOutcome.AlreadyReleased.class);
                }
                long[] figures = redisFigures(t, a);
                assertThat(figures[1]).as("held of %s", a).isZero();
                assertThat(figures[0]).isEqualTo(c instanceof HoldOutcome.Captured ? 940 : 1_000);
            }
            System.out.printf("holds race with the ledger: %d of 60 captures won%n", captured / 60);
            Support.drained(consumer);
            assertThat(reconciler.check().drifted()).isEmpty();
            long redisTotal = 0;
            long databaseTotal = 0;
            for (String a : accounts) {
                long[] inRedis = redisFigures(t, a);
                assertThat(databaseFigures(pg, a)).as("database figures of %s", a).containsExactly(inRedis);
                redisTotal += inRedis[0] + inRedis[1];
                long[] inDatabase = databaseFigures(pg, a);
                databaseTotal += inDatabase[0] + inDatabase[1];
            }
            assertThat(redisTotal).isEqualTo(databaseTotal).isEqualTo(60 * 1_000L - captured);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("repair with open holds: Redis's available takes the difference, the holds stay")
    void repairKeepsHolds() {
        Tenant t = Tenant.fresh(server());
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = t.quota();
             Reconciler reconciler = t.reconciler(pg)) {
            String a = "h-repair-" + UUID.randomUUID();
            quota.open(a, 1_000);
            quota.hold(a, 400, "h", Duration.ofHours(1));
            try (LedgerConsumer c = t.consumer(pg)) {
                Support.drained(c);
            }
            server().command("HINCRBY", t.layout().accountKey(a), "balance", "-7"); // behind the engine's back
            RepairReport repair = reconciler.repair(true);
            assertThat(repair.repairs()).singleElement().satisfies(r -> {
                assertThat(r.status()).isEqualTo(RepairReport.Status.APPLIED);
                assertThat(r.to()).isEqualTo(1_000);
            });
            assertThat(redisFigures(t, a)).containsExactly(600, 400);
            assertThat(reconciler.check().drifted()).isEmpty();
            assertThat(quota.capture(a, "h", 400)).isInstanceOf(HoldOutcome.Captured.class);
        }
    }

    static long[] databaseFigures(DataSource ds, String account) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT balance, held FROM ledger_accounts WHERE account = ?")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the database has account %s", account).isTrue();
                return new long[]{rs.getLong(1), rs.getLong(2)};
            }
        }
    }

    /** The account's entries in journal order, as {@code <kind>:<request_id>}. */
    static List<String> entries(DataSource ds, String account) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT kind, request_id FROM ledger_entries WHERE account = ?"
                     + " ORDER BY entry_ms, entry_seq")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1) + ":" + rs.getString(2));
                }
            }
        }
        return out;
    }
}
