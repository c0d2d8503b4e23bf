package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.ledger.reconcile.BootstrapReport;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Postings to named balances journaled, persisted by the consumer and reconciled balance by balance. */
class PostingsLedgerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static RedisServer server() {
        return redis.server();
    }

    @Test
    @DisplayName("PostgreSQL: postings (and refusals) persisted line by line, balances equal Redis's, reconciled clean; drift of a named balance is reported")
    void onPostgres() throws SQLException {
        try (HikariDataSource pg = Support.freshPostgres(postgres.server())) {
            everyPath(pg);
        }
    }

    @Test
    @DisplayName("Redis loses the tenant's data: bootstrap loads each account with its named balances from the database, once")
    void bootstrapRestoresNamedBalances() throws SQLException {
        Tenant t = Tenant.fresh(server());
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = QuotaService.create(t.settings());
             Reconciler reconciler = Reconciler.create(t.settings(), pg)) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                String a = "b-" + i + "-" + UUID.randomUUID();
                quota.open(a, 300);
                quota.openBalance(a, "plan");
                quota.openBalance(a, "points");
                assertThat(quota.post(a, "fund", Map.of("plan", 100L + i, "points", 7L))).isInstanceOf(PostingOutcome.Posted.class);
                assertThat(quota.post(a, "use", Map.of("plan", -(1L + i)))).isInstanceOf(PostingOutcome.Posted.class);
                accounts.add(a);
            }
            // Opened but never posted to: the ledger has no row for it.
            quota.openBalance(accounts.get(0), "coupons");
            try (LedgerConsumer c = t.consumer(pg)) {
                Support.drained(c);
            }
            Map<String, SortedMap<String, Long>> before = new java.util.HashMap<>();
            for (String a : accounts) {
                before.put(a, databaseBalances(pg, a));
            }

            // The tenant's data is gone from Redis (its keys only: other tests share the server).
            Object keys = server().command("KEYS", t.settings().get("warden.quota.namespace") + ":*");
            for (Object key : (List<?>) keys) {
                server().command("DEL", String.valueOf(key));
            }
            assertThat(org.assertj.core.api.Assertions.catchThrowableOfType(dev.warden.quota.QuotaException.class,
                    () -> quota.balances(accounts.get(1))).reason()).isEqualTo(dev.warden.quota.QuotaException.Reason.DATA_LOST);

            BootstrapReport report = reconciler.bootstrap();
            assertThat(report.accountsLoaded()).isEqualTo(accounts.size());
            assertThat(report.balancesLoaded()).isEqualTo(2 * accounts.size());
            for (String a : accounts) {
                assertThat(quota.balances(a)).as("named balances of %s", a).hasValue(before.get(a));
                assertThat(before.get(a)).containsKeys("plan", "points");
            }
            assertThat(quota.balances(accounts.get(0)).orElseThrow()).doesNotContainKey("coupons");
            assertThat(quota.post(accounts.get(2), "after", Map.of("plan", -5L, "points", 1L))).isInstanceOf(PostingOutcome.Posted.class);
            BootstrapReport again = reconciler.bootstrap();
            assertThat(again.accountsLoaded()).isZero();
            assertThat(again.balancesLoaded()).isZero();

            // A bootstrap that stopped after loading the accounts, before their balances and the markers:
            // the next one finds the accounts present and still loads their balances.
            String b = accounts.get(4);
            SortedMap<String, Long> bBefore = quota.balances(b).orElseThrow();
            server().command("DEL", t.layout().balancesKey(b));
            server().command("DEL", t.layout().marker(t.layout().partition(b)));
            BootstrapReport resumed = reconciler.bootstrap();
            assertThat(resumed.accountsLoaded()).isZero();
            assertThat(resumed.balancesLoaded()).isEqualTo(2);
            assertThat(resumed.markersWritten()).isEqualTo(1);
            assertThat(quota.balances(b)).hasValue(bBefore);
            try (LedgerConsumer c = t.consumer(pg)) {
                Support.drained(c);
            }
            assertThat(reconciler.check().drifted()).isEmpty();
        }
    }

    @Test
    @DisplayName("H2 (migrated to the latest version): the same")
    void onH2() throws SQLException {
        DataSource h2 = Support.h2();
        assertThat(Ledger.migrate(h2)).isEqualTo("7");
        everyPath(h2);
    }

    private void everyPath(DataSource ds) throws SQLException {
        Tenant t = Tenant.fresh(server());
        try (QuotaService quota = QuotaService.create(t.settings());
             Reconciler reconciler = Reconciler.create(t.settings(), ds)) {
            List<String> accounts = new ArrayList<>();
            Random random = new Random(17);
            for (int i = 0; i < 12; i++) {
                String a = "p-" + i + "-" + UUID.randomUUID();
                quota.open(a, 500);
                for (String name : List.of("coupons", "plan", "points")) {
                    quota.openBalance(a, name);
                }
                accounts.add(a);
            }
            try (LedgerConsumer c = t.consumer(ds)) {
                Support.drained(c);
            }
            int posted = 0;
            for (String a : accounts) {
                assertThat(quota.post(a, "fund", Map.of("plan", 100L, "points", 40L, "coupons", 2L)))
                        .isInstanceOf(PostingOutcome.Posted.class);
                posted++;
                for (int k = 0; k < 10; k++) {
                    Map<String, Long> lines = new TreeMap<>();
                    lines.put("plan", -(1L + random.nextInt(20)));
                    if (random.nextBoolean()) {
                        lines.put("points", (long) (random.nextInt(2) == 0 ? 5 : -7));
                    }
                    if (random.nextInt(3) == 0) {
                        lines.put("coupons", -1L);
                    }
                    PostingOutcome o = quota.post(a, "r" + k, lines);
                    if (o.isApplied()) {
                        posted++;
                    } else {
                        assertThat(o).isInstanceOf(PostingOutcome.Insufficient.class);
                    }
                }
                assertThat(quota.post(a, "fund", Map.of("plan", 100L, "points", 40L, "coupons", 2L)))
                        .isInstanceOf(PostingOutcome.Duplicate.class);
                quota.deduct(a, 10, "d1");
            }
            // In flight: the journal's tail counts, so nothing shows as drift before the consumer runs.
            assertThat(reconciler.check().drifted()).isEmpty();
            try (LedgerConsumer c = t.consumer(ds)) {
                Support.drained(c);
            }
            ReconciliationReport report = reconciler.check();
            assertThat(report.drifted()).isEmpty();
            assertThat(report.unresolvedQuarantine()).isZero();
            int lines = 0;
            for (String a : accounts) {
                SortedMap<String, Long> inRedis = quota.balances(a).orElseThrow();
                assertThat(databaseBalances(ds, a)).as("database balances of %s", a).isEqualTo(inRedis);
                assertThat(inRedis.values()).allMatch(v -> v >= 0);
                lines += count(ds, "SELECT COUNT(*) FROM ledger_posting_lines WHERE account = '" + a + "'");
            }
            assertThat(count(ds, "SELECT COUNT(*) FROM ledger_entries WHERE kind = 'post' AND account LIKE 'p-%'"
                    + " AND account IN (" + String.join(",", accounts.stream().map(a -> "'" + a + "'").toList()) + ")"))
                    .isEqualTo(posted);
            assertThat(lines).isGreaterThanOrEqualTo(posted);

            // Behind the engine's back: the named balance drifts, and is reported (not repaired).
            String a = accounts.get(0);
            server().command("HINCRBY", t.layout().balancesKey(a), "points", "3");
            ReconciliationReport drifted = reconciler.check();
            assertThat(drifted.drifted()).singleElement().satisfies(d -> {
                assertThat(d.account()).isEqualTo(a);
                assertThat(d.balance()).isEqualTo("points");
                assertThat(d.difference()).isEqualTo(3);
            });
            RepairReport repair = reconciler.repair(true);
            assertThat(repair.repairs()).isEmpty();
            assertThat(repair.skipped()).extracting(ReconciliationReport.Drift::balance).containsExactly("points");
        }
    }

    @Test
    @DisplayName("a posting's request id applied again after its records expired: quarantined (never compensated), the drift named by balance")
    void reusedRequestIdQuarantined() throws SQLException {
        Tenant t = Tenant.fresh(server());
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = QuotaService.create(t.settings());
             Reconciler reconciler = Reconciler.create(t.settings(), pg);
             LedgerConsumer consumer = t.consumer(pg)) {
            String a = "p-reuse-" + UUID.randomUUID();
            quota.open(a, 10);
            quota.openBalance(a, "points");
            assertThat(quota.post(a, "grant", Map.of("points", 100L))).isInstanceOf(PostingOutcome.Posted.class);
            Support.drained(consumer);
            // The idempotency records expire (here: deleted behind the engine's back), and the retry comes.
            server().command("DEL", t.layout().requestKey(a, "grant"), t.layout().postingKey(a, "grant"));
            assertThat(quota.post(a, "grant", Map.of("points", 100L))).isInstanceOf(PostingOutcome.Posted.class);
            Support.drained(consumer);

            assertThat(Ledger.quarantine(pg, true)).singleElement().satisfies(q -> {
                assertThat(q.reason()).isEqualTo(QuarantineReason.CONSTRAINT);
                assertThat(q.detail()).contains("grant", "posting");
            });
            assertThat(databaseBalances(pg, a)).containsExactly(Map.entry("points", 100L));
            assertThat(reconciler.check().drifted()).singleElement().satisfies(d -> {
                assertThat(d.balance()).isEqualTo("points");
                assertThat(d.redisBalance()).hasValue(200);
                assertThat(d.expected()).hasValue(100);
            });
        }
    }

    @Test
    @DisplayName("a debit the database cannot cover (its row was lowered behind Redis's back): quarantined as NEGATIVE_BALANCE, the batch's other postings applied")
    void negativeInTheDatabaseQuarantined() throws SQLException {
        Tenant t = Tenant.fresh(server());
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = QuotaService.create(t.settings())) {
            String a = "p-neg-" + UUID.randomUUID();
            String b = "p-ok-" + UUID.randomUUID();
            for (String x : List.of(a, b)) {
                quota.open(x, 10);
                quota.openBalance(x, "plan");
                quota.post(x, "fund", Map.of("plan", 50L));
            }
            try (LedgerConsumer c = t.consumer(pg)) {
                Support.drained(c);
            }
            try (Connection c = pg.getConnection(); PreparedStatement ps = c.prepareStatement(
                    "UPDATE ledger_balances SET amount = 5 WHERE account = ?")) {
                ps.setString(1, a);
                assertThat(ps.executeUpdate()).isEqualTo(1);
            }
            assertThat(quota.post(a, "use", Map.of("plan", -20L))).isInstanceOf(PostingOutcome.Posted.class);
            assertThat(quota.post(b, "use", Map.of("plan", -20L))).isInstanceOf(PostingOutcome.Posted.class);
            try (LedgerConsumer c = t.consumer(pg)) {
                Support.drained(c);
            }
            assertThat(Ledger.quarantine(pg, true)).singleElement().satisfies(q -> {
                assertThat(q.reason()).isEqualTo(QuarantineReason.NEGATIVE_BALANCE);
                assertThat(q.fields()).containsEntry("account", a).containsEntry("lines", "plan=-20");
            });
            assertThat(databaseBalances(pg, a)).containsExactly(Map.entry("plan", 5L));
            assertThat(databaseBalances(pg, b)).containsExactly(Map.entry("plan", 30L));
        }
    }

    @Test
    @DisplayName("postings from four threads while the consumer runs: never negative, and once drained the database equals Redis balance by balance")
    void concurrentWithTheConsumer() throws Exception {
        Tenant t = Tenant.fresh(server());
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = QuotaService.create(t.settings());
             Reconciler reconciler = Reconciler.create(t.settings(), pg);
             LedgerConsumer consumer = t.consumer(pg)) {
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String a = "p-conc-" + i + "-" + UUID.randomUUID();
                quota.open(a, 100);
                quota.openBalance(a, "plan");
                quota.openBalance(a, "points");
                quota.post(a, "fund", Map.of("plan", 300L, "points", 300L));
                accounts.add(a);
            }
            List<java.util.concurrent.Future<Integer>> done = new ArrayList<>();
            for (int th = 0; th < 4; th++) {
                int seed = th;
                done.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    int applied = 0;
                    for (int i = 0; i < 100; i++) {
                        String a = accounts.get(random.nextInt(accounts.size()));
                        Map<String, Long> lines = new TreeMap<>();
                        lines.put("plan", -(1L + random.nextInt(9)));
                        lines.put("points", random.nextBoolean() ? 2L : -(1L + random.nextInt(9)));
                        PostingOutcome o = quota.post(a, "t" + seed + "-" + i, lines);
                        if (o instanceof PostingOutcome.Posted) {
                            applied++;
                        } else {
                            assertThat(o).isInstanceOf(PostingOutcome.Insufficient.class);
                        }
                    }
                    return applied;
                }));
            }
            int applied = 0;
            for (java.util.concurrent.Future<Integer> f : done) {
                applied += f.get(120, java.util.concurrent.TimeUnit.SECONDS);
            }
            Support.drained(consumer);
            ReconciliationReport report = reconciler.check();
            assertThat(report.drifted()).isEmpty();
            assertThat(report.unresolvedQuarantine()).isZero();
            int entries = 0;
            for (String a : accounts) {
                SortedMap<String, Long> inRedis = quota.balances(a).orElseThrow();
                assertThat(inRedis.values()).allMatch(v -> v >= 0);
                assertThat(databaseBalances(pg, a)).as("database balances of %s", a).isEqualTo(inRedis);
                entries += count(pg, "SELECT COUNT(*) FROM ledger_entries WHERE kind = 'post' AND account = '" + a + "'");
            }
            assertThat(entries).isEqualTo(3 + applied);
        } finally {
            pool.shutdownNow();
        }
    }

    static SortedMap<String, Long> databaseBalances(DataSource ds, String account) throws SQLException {
        SortedMap<String, Long> out = new TreeMap<>();
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT name, amount FROM ledger_balances WHERE account = ?")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return out;
    }

    static int count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
