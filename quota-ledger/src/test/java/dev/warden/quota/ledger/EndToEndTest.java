package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Concurrent deducting clients, the consumer, one consumer crash and one Redis restart (append-only
 * file, fsync always); then drain: every account's database balance is its initial quota minus the
 * deductions its callers saw acknowledged, and reconciliation finds no drift.
 */
class EndToEndTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(RedisServer.builder().appendOnly(true).appendFsyncAlways());
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static final int ACCOUNTS = 40;
    static final int CLIENTS = 8;
    static final int PER_CLIENT = 400;
    static final long INITIAL = 50_000;
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

    @Test
    @DisplayName("clients, consumer crash, Redis restart, drain: database = initial − acknowledged deductions, and no drift")
    void endToEnd() throws Exception {
        RedisServer server = redis.server();
        long started = System.nanoTime();
        List<String> accounts = new ArrayList<>();
        Map<String, AtomicLong> acknowledged = new ConcurrentHashMap<>();
        AtomicLong attempts = new AtomicLong();
        AtomicLong refusedInsufficient = new AtomicLong();
        AtomicLong unavailableRetries = new AtomicLong();
        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        LedgerConsumer heir = null;
        try (QuotaService quota = Support.quota(server)) {
            for (int i = 0; i < ACCOUNTS; i++) {
                String a = "e2e-" + UUID.randomUUID();
                quota.open(a, INITIAL);
                accounts.add(a);
                acknowledged.put(a, new AtomicLong());
            }
            LedgerConsumer victim = Support.consumer(server, ConsumerCrashTest.crashingAfterCommit(ds, 5),
                    "victim-" + UUID.randomUUID()).batchSize(20).start();
            CountDownLatch halfway = new CountDownLatch(CLIENTS);
            CountDownLatch restarted = new CountDownLatch(1);
            List<Future<?>> clients = new ArrayList<>();
            for (int t = 0; t < CLIENTS; t++) {
                int client = t;
                clients.add(pool.submit(() -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < PER_CLIENT; i++) {
                        if (i == PER_CLIENT / 2) {
                            halfway.countDown();
                            await(restarted);
                        }
                        String a = accounts.get(random.nextInt(accounts.size()));
                        long amount = 1 + random.nextInt(200);
                        String request = "c" + client + "-" + i + "-" + UUID.randomUUID();
                        attempts.incrementAndGet();
                        Outcome o = retrying(() -> quota.deduct(a, amount, request), unavailableRetries);
                        if (o.isApplied()) {
                            acknowledged.get(a).addAndGet(amount);
                        } else if (o instanceof Outcome.Insufficient) {
                            refusedInsufficient.incrementAndGet();
                        } else {
                            throw new AssertionError("unexpected " + o);
                        }
                    }
                    return null;
                }));
            }
            Support.await("the first consumer crashed", () -> !victim.isRunning());
            heir = Support.consumer(server, ds, "heir-" + UUID.randomUUID()).batchSize(20).start();
            halfway.await();
            // Half the traffic is in; the clients now run into a Redis that is killed and comes back.
            restarted.countDown();
            LockSupport.parkNanos(20_000_000);
            server.kill();
            server.restart();
            for (Future<?> f : clients) {
                f.get();
            }
            victim.close();
            Support.drained(heir);
            long drainedAt = System.nanoTime();

            long deductions = 0;
            long total = 0;
            for (String a : accounts) {
                long expected = INITIAL - acknowledged.get(a).get();
                total += acknowledged.get(a).get();
                assertThat(Long.parseLong(postgres.server().psql("SET search_path TO " + schema
                        + "; SELECT balance FROM ledger_accounts WHERE account = '" + a + "'"))).as(a).isEqualTo(expected);
                assertThat(quota.balance(a)).hasValue(expected);
                deductions += Long.parseLong(postgres.server().psql("SET search_path TO " + schema
                        + "; SELECT COUNT(*) FROM ledger_entries WHERE kind = 'deduct' AND account = '" + a + "'"));
            }
            try (Reconciler reconciler = Reconciler.create(Support.settings(server), ds)) {
                ReconciliationReport report = reconciler.check();
                assertThat(report.drifted()).isEmpty();
                assertThat(report.unpersistedEntries()).isZero();
            }
            assertThat(heir.stats().claimed()).isPositive();
            System.out.printf("end to end: %d accounts, %d clients, %d deduction attempts, %d acknowledged (sum %d),"
                            + " %d refused as insufficient, %d retries while Redis was away, %d ledger entries,"
                            + " heir claimed %d, %.1f s from start to drained%n", ACCOUNTS, CLIENTS, attempts.get(),
                    deductions, total, refusedInsufficient.get(), unavailableRetries.get(),
                    Long.parseLong(postgres.server().psql("SET search_path TO " + schema + "; SELECT COUNT(*) FROM ledger_entries")),
                    heir.stats().claimed(), (drainedAt - started) / 1e9);
        } finally {
            pool.shutdownNow();
            if (heir != null) {
                heir.close();
            }
        }
    }

    static Outcome retrying(java.util.function.Supplier<Outcome> call, AtomicLong retries) {
        long end = System.nanoTime() + Support.DEADLINE.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (QuotaException e) {
                if (e.reason() != QuotaException.Reason.UNAVAILABLE || System.nanoTime() - end > 0) {
                    throw e;
                }
                retries.incrementAndGet();
                LockSupport.parkNanos(5_000_000);
            }
        }
    }

    static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
