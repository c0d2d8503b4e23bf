package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Split accounts through the ledger on PostgreSQL: a split account's entries arrive on several partition
 * streams, consumed concurrently in any interleaving; the ledger's balance (CHECK balance >= 0) never refuses
 * one, agrees with Redis's sum of buckets, and reconciliation compares the sum.
 */
class BucketsLedgerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static RedisServer server() {
        return redis.server();
    }

    static long databaseBalance(DataSource ds, String account) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT balance FROM ledger_accounts WHERE account = ?")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("the ledger holds %s", account).isTrue();
                return rs.getLong(1);
            }
        }
    }

    static long count(DataSource ds, String account, String kind) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM ledger_entries WHERE account = ? AND kind = ?")) {
            ps.setString(1, account);
            ps.setString(2, kind);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    static int route(String requestId, int buckets) {
        CRC32 crc = new CRC32();
        crc.update(("route:" + requestId).getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % buckets);
    }

    @Test
    @DisplayName("8 buckets, 200 threads of 2 clients to exhaustion with top-ups, then a merge, the consumer running"
            + " throughout: nothing quarantined, the ledger equals the sum of the buckets, reconciliation clean")
    void exhaustionThroughTheLedger() throws Exception {
        Tenant t = Tenant.fresh(server());
        Support.Recorder recorder = new Support.Recorder();
        ExecutorService pool = Executors.newFixedThreadPool(201);
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService a = t.quota();
             QuotaService b = t.quota();
             Reconciler reconciler = t.reconciler(pg);
             LedgerConsumer consumer = t.consumer(pg, recorder)) {
            String account = "hot-" + UUID.randomUUID();
            long initial = 20_000;
            a.open(account, initial);
            assertThat(a.split(account, 8)).isEqualTo(new SplitOutcome.Split(8));
            CyclicBarrier start = new CyclicBarrier(201);
            AtomicLong deducted = new AtomicLong();
            AtomicLong deductions = new AtomicLong();
            List<Future<?>> done = new ArrayList<>();
            done.add(pool.submit(() -> {
                start.await(10, TimeUnit.SECONDS);
                for (int i = 0; i < 10; i++) {
                    assertThat((i % 2 == 0 ? a : b).topUp(account, 500, "top-" + i).isApplied()).isTrue();
                }
                return null;
            }));
            for (int th = 0; th < 200; th++) {
                int id = th;
                done.add(pool.submit(() -> {
                    QuotaService client = id % 2 == 0 ? a : b;
                    Random random = new Random(id);
                    start.await(10, TimeUnit.SECONDS);
                    for (int i = 0; ; i++) {
                        long amount = 1 + random.nextInt(20);
                        Outcome o = client.deduct(account, amount, "t" + id + "-" + i);
                        if (o instanceof Outcome.Insufficient) {
                            amount = 1;
                            o = client.deduct(account, 1, "t" + id + "-" + i + "-one");
                        }
                        if (!(o instanceof Outcome.Applied)) {
                            return null;
                        }
                        deducted.addAndGet(amount);
                        deductions.incrementAndGet();
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            long left = a.balance(account).orElseThrow();
            assertThat(deducted.get()).isEqualTo(initial + 5_000 - left);

            Support.drained(consumer);
            assertThat(recorder.quarantined).isEmpty();
            assertThat(databaseBalance(pg, account)).isEqualTo(left);
            assertThat(count(pg, account, "deduct")).isEqualTo(deductions.get());
            assertThat(count(pg, account, "moveout")).isEqualTo(count(pg, account, "movein")).isPositive();
            ReconciliationReport split = reconciler.check();
            assertThat(split.drifted()).isEmpty();
            assertThat(split.unresolvedQuarantine()).isZero();

            assertThat(b.merge(account)).isEqualTo(new SplitOutcome.Merged(8));
            Support.drained(consumer);
            assertThat(recorder.quarantined).isEmpty();
            assertThat(databaseBalance(pg, account)).isEqualTo(left);
            assertThat(server().command("HGET", t.layout().accountKey(account), "balance")).isEqualTo(Long.toString(left));
            assertThat(reconciler.check().drifted()).isEmpty();
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @DisplayName("a retry crossing a split lands in another bucket and is applied again in Redis: the ledger"
            + " compensates it, and both sides end with one deduction")
    void retryAcrossSplitIsCompensated() throws Exception {
        Tenant t = Tenant.fresh(server());
        Support.Recorder recorder = new Support.Recorder();
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = t.quota();
             Reconciler reconciler = t.reconciler(pg);
             LedgerConsumer consumer = t.consumer(pg, recorder)) {
            String account = "hot-" + UUID.randomUUID();
            quota.open(account, 800);
            String request = "x0";
            for (int i = 1; route(request, 8) == 0; i++) {
                request = "x" + i;
            }
            assertThat(quota.deduct(account, 5, request)).isInstanceOf(Outcome.Applied.class);
            quota.split(account, 8);
            assertThat(quota.deduct(account, 5, request)).isInstanceOf(Outcome.Applied.class);

            Support.await("the replay was compensated", () -> !recorder.compensations.isEmpty());
            Support.drained(consumer);
            assertThat(quota.balance(account)).hasValue(795);
            assertThat(databaseBalance(pg, account)).isEqualTo(795);
            assertThat(recorder.quarantined).isEmpty();
            assertThat(reconciler.check().drifted()).isEmpty();
        }
    }

    @Test
    @DisplayName("a bucket changed behind the engine's back: reconciliation reports the split account's drift and"
            + " repair leaves it alone (merge first)")
    void driftOfASplitAccount() throws Exception {
        Tenant t = Tenant.fresh(server());
        try (HikariDataSource pg = Support.freshPostgres(postgres.server());
             QuotaService quota = t.quota();
             Reconciler reconciler = t.reconciler(pg);
             LedgerConsumer consumer = t.consumer(pg, new Support.Recorder())) {
            String account = "hot-" + UUID.randomUUID();
            quota.open(account, 8_000);
            quota.split(account, 8);
            quota.deduct(account, 10, "d1");
            Support.drained(consumer);
            assertThat(reconciler.check().drifted()).isEmpty();

            server().command("HINCRBY", t.layout().bucketKey(account, 3), "balance", "7");
            ReconciliationReport report = reconciler.check();
            assertThat(report.drifted()).singleElement().satisfies(d -> {
                assertThat(d.account()).isEqualTo(account);
                assertThat(d.difference()).isEqualTo(7);
                assertThat(d.redisBalance()).hasValue(7_997);
                assertThat(d.databaseBalance()).hasValue(7_990);
            });
            RepairReport repair = reconciler.repair(true);
            assertThat(repair.repairs()).isEmpty();
            assertThat(repair.skipped()).extracting(ReconciliationReport.Drift::account).containsExactly(account);
            assertThat(quota.balance(account)).hasValue(7_997);
        }
    }
}
