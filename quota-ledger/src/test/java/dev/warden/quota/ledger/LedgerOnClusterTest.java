package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisClusterExtension;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ledger on a Redis Cluster (three primaries with replicas, append-only file fsynced on every
 * write): consumers drain the partitions of every node, reconciliation reads every primary, and a
 * primary killed in the middle of a load and restarted from its file loses nothing acknowledged.
 */
class LedgerOnClusterTest {

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension(RedisCluster.builder()
            .appendOnly(true).appendFsyncAlways());
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

    private static RedisCluster cluster() {
        return redis.cluster();
    }

    private static String endpoint() {
        return cluster().uri();
    }

    static long dbBalance(String account) {
        return Long.parseLong(postgres.server().psql("SET search_path TO " + schema
                + "; SELECT balance FROM ledger_accounts WHERE account = '" + account + "'"));
    }

    static long dbDeductions(String prefix) {
        String sum = postgres.server().psql("SET search_path TO " + schema
                + "; SELECT COALESCE(SUM(amount), 0) FROM ledger_entries WHERE kind = 'deduct' AND account LIKE '" + prefix + "%'");
        return Long.parseLong(sum);
    }

    /** One account per partition, so every partition, and so every primary, has entries. */
    static List<String> accountPerPartition(String prefix) {
        Map<Integer, String> byPartition = new HashMap<>();
        for (int i = 0; byPartition.size() < LAYOUT.partitions(); i++) {
            String a = prefix + i;
            byPartition.putIfAbsent(LAYOUT.partition(a), a);
        }
        return new ArrayList<>(byPartition.values());
    }

    @Test
    @DisplayName("two consumers drain every partition of every node; reconciliation reads every primary and is clean")
    void drainsEveryNode() {
        String run = "drain-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        List<String> accounts = accountPerPartition(run);
        Set<RedisServer> nodes = new HashSet<>();
        accounts.forEach(a -> nodes.add(cluster().primaryOf(LAYOUT.journalOf(a))));
        assertThat(nodes).as("the partitions spread over every primary").hasSize(3);
        Support.Recorder seen = new Support.Recorder();
        try (QuotaService quota = QuotaService.create(Support.settings(endpoint()));
             LedgerConsumer a = Support.consumer(endpoint(), ds, "a-" + run).listener(seen).start();
             LedgerConsumer b = Support.consumer(endpoint(), ds, "b-" + run).listener(seen).start()) {
            for (String account : accounts) {
                assertThat(quota.open(account, 1_000)).isInstanceOf(Outcome.Applied.class);
                for (int i = 0; i < 5; i++) {
                    assertThat(quota.deduct(account, 10 + i, "r" + i).isApplied()).isTrue();
                }
            }
            Support.await("both consumers drained every partition", () -> a.backlog() == 0 && b.backlog() == 0
                    && accounts.stream().allMatch(acct -> dbBalanceOrMinusOne(acct) == 1_000 - 60));
            Set<Integer> partitions = new HashSet<>();
            seen.batches.forEach(batch -> partitions.add(batch.partition()));
            assertThat(partitions).as("partitions that committed batches").hasSize(LAYOUT.partitions());
            for (String account : accounts) {
                assertThat(quota.balance(account)).hasValue(940);
            }
            try (Reconciler reconciler = Reconciler.create(Support.settings(endpoint()), ds)) {
                ReconciliationReport report = reconciler.check();
                assertThat(report.drifted()).isEmpty();
                assertThat(report.accountsChecked()).isGreaterThanOrEqualTo(accounts.size());
            }
        }
    }

    @Test
    @DisplayName("drift on every primary, and accounts only Redis holds on every primary, are all found (SCAN of each) and repaired")
    void reconciliationCoversEveryPrimary() {
        String run = "recon-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        List<String> accounts = accountPerPartition(run);
        try (QuotaService quota = QuotaService.create(Support.settings(endpoint()));
             LedgerConsumer consumer = Support.consumer(endpoint(), ds, "c-" + run).start()) {
            for (String account : accounts) {
                quota.open(account, 500);
            }
            Support.await("the ledger holds every account", () -> consumer.backlog() == 0
                    && accounts.stream().allMatch(acct -> dbBalanceOrMinusOne(acct) == 500));
        }
        // Behind the engine's back: one drifted balance and one account the ledger never saw, on each primary.
        Map<RedisServer, String> drifted = new HashMap<>();
        for (String account : accounts) {
            drifted.putIfAbsent(cluster().primaryOf(LAYOUT.accountKey(account)), account);
        }
        List<String> onlyInRedis = new ArrayList<>();
        for (Map.Entry<RedisServer, String> e : drifted.entrySet()) {
            e.getKey().command("HSET", LAYOUT.accountKey(e.getValue()), "balance", "7");
            String ghost = e.getValue() + "-ghost";
            // The ghost shares the drifted account's partition only by chance; place it on this primary for sure.
            String placed = ghost;
            for (int i = 0; cluster().primaryOf(LAYOUT.accountKey(placed)) != e.getKey(); i++) {
                placed = ghost + i;
            }
            e.getKey().command("HSET", LAYOUT.accountKey(placed), "balance", "3");
            onlyInRedis.add(placed);
        }
        try (Reconciler reconciler = Reconciler.create(Support.settings(endpoint()), ds)) {
            ReconciliationReport report = reconciler.check();
            List<String> reported = report.drifted().stream().map(ReconciliationReport.Drift::account).toList();
            assertThat(reported).containsAll(drifted.values()).containsAll(onlyInRedis);
            RepairReport repaired = reconciler.repair(true);
            assertThat(repaired.repairs()).extracting(RepairReport.Repair::account).containsExactlyInAnyOrderElementsOf(drifted.values());
            ReconciliationReport after = reconciler.check();
            assertThat(after.drifted()).extracting(ReconciliationReport.Drift::account)
                    .containsExactlyInAnyOrderElementsOf(onlyInRedis); // reported, never deleted
        } finally {
            for (String ghost : onlyInRedis) {
                cluster().command(LAYOUT.accountKey(ghost), "DEL", LAYOUT.accountKey(ghost));
            }
        }
    }

    @Test
    @DisplayName("a primary killed mid-load and restarted from its append-only file: Σ ledger = Σ acknowledged after reconciliation")
    void primaryKilledMidLoad() throws Exception {
        String run = "kill-" + UUID.randomUUID().toString().substring(0, 8) + "-";
        List<String> accounts = accountPerPartition(run);
        long initial = 1_000_000;
        Map<String, AtomicLong> acknowledged = new ConcurrentHashMap<>();
        AtomicLong calls = new AtomicLong();
        try (QuotaService quota = QuotaService.create(Support.settings(endpoint()));
             LedgerConsumer consumer = Support.consumer(endpoint(), ds, "c-" + run).start()) {
            for (String account : accounts) {
                assertThat(quota.open(account, initial)).isInstanceOf(Outcome.Applied.class);
                acknowledged.put(account, new AtomicLong());
            }
            ExecutorService pool = Executors.newFixedThreadPool(4);
            List<Future<?>> load = new ArrayList<>();
            int perThread = 250;
            for (int t = 0; t < 4; t++) {
                int thread = t;
                load.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        String account = accounts.get(ThreadLocalRandom.current().nextInt(accounts.size()));
                        long amount = 1 + i % 9;
                        String request = "t" + thread + "-" + i;
                        Outcome o = untilAnswered(() -> quota.deduct(account, amount, request));
                        if (o.isApplied()) {
                            acknowledged.get(account).addAndGet(amount);
                        }
                        calls.incrementAndGet();
                    }
                    return null;
                }));
            }
            Support.await("a part of the load ran", () -> calls.get() >= 200);
            int slot = RedisCluster.slot(LAYOUT.journalOf(accounts.get(0)));
            RedisServer victim = cluster().primaryOfSlot(slot);
            victim.kill();
            victim.restart();
            try {
                for (Future<?> f : load) {
                    f.get(3, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(cluster().primaryOfSlot(slot)).as("restarted before its peers failed it over").isSameAs(victim);
            Support.await("the ledger holds every acknowledged deduction", () -> consumer.backlog() == 0);
            try (Reconciler reconciler = Reconciler.create(Support.settings(endpoint()), ds)) {
                ReconciliationReport report = untilReady(reconciler::check);
                if (report.drifted().stream().anyMatch(d -> d.account().startsWith(run))) {
                    reconciler.repair(true);
                    report = reconciler.check();
                }
                assertThat(report.drifted()).filteredOn(d -> d.account().startsWith(run)).isEmpty();
            }
            long sumAcknowledged = acknowledged.values().stream().mapToLong(AtomicLong::get).sum();
            assertThat(sumAcknowledged).isPositive();
            assertThat(dbDeductions(run)).as("Σ ledger deductions = Σ acknowledged").isEqualTo(sumAcknowledged);
            for (String account : accounts) {
                long expected = initial - acknowledged.get(account).get();
                assertThat(dbBalance(account)).as(account).isEqualTo(expected);
                assertThat(quota.balance(account)).as(account).hasValue(expected);
            }
            System.out.println("LEDGER-ON-CLUSTER kill: " + calls.get() + " deductions (" + UNAVAILABLE.get()
                    + " UNAVAILABLE replies retried with the same request id), Σ acknowledged " + sumAcknowledged
                    + " = Σ ledger " + dbDeductions(run));
        }
    }

    private static long dbBalanceOrMinusOne(String account) {
        String b = postgres.server().psql("SET search_path TO " + schema
                + "; SELECT balance FROM ledger_accounts WHERE account = '" + account + "'");
        return b == null || b.isBlank() ? -1 : Long.parseLong(b.trim());
    }

    static final AtomicLong UNAVAILABLE = new AtomicLong();

    /** Retries with the same request id while Redis is away: the final outcome is what the caller saw. */
    static Outcome untilAnswered(Supplier<Outcome> call) {
        long end = System.nanoTime() + Support.DEADLINE.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (QuotaException e) {
                if (e.reason() != QuotaException.Reason.UNAVAILABLE || System.nanoTime() - end > 0) {
                    throw e;
                }
                UNAVAILABLE.incrementAndGet();
                LockSupport.parkNanos(10_000_000);
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
                LockSupport.parkNanos(10_000_000);
            }
        }
    }
}
