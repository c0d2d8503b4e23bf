package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many threads across two clients (two services, two connections each) against one deployment:
 * balances stay exact and never negative (an account runs dry exactly), and the journal holds exactly
 * the applied changes. A subclass says which deployment (one server, a Cluster) and where a key lives.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ConcurrencyContractTest {

    static final int THREADS = 64;
    static final KeyLayout LAYOUT = new KeyLayout(16);
    QuotaService first;
    QuotaService second;

    /** {@code warden.quota.endpoint} of the deployment. */
    protected abstract String endpoint();

    /** The server that holds {@code key} (on a Cluster, the primary of its slot), read directly. */
    protected abstract RedisServer nodeOf(String key);

    @BeforeAll
    void connect() {
        Map<String, String> settings = Map.of("warden.quota.endpoint", endpoint(), "warden.quota.connect-timeout", "10s");
        first = QuotaService.create(settings);
        second = QuotaService.create(settings);
    }

    @AfterAll
    void close() {
        first.close();
        second.close();
    }

    QuotaService clientOf(int thread) {
        return thread % 2 == 0 ? first : second;
    }

    /** Runs {@code THREADS} workers released together; returns once all are done. */
    static <T> List<T> race(int threads, ThreadTask<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                futures.add(pool.submit((Callable<T>) () -> {
                    start.await();
                    return task.run(thread);
                }));
            }
            start.countDown();
            List<T> results = new ArrayList<>();
            for (Future<T> f : futures) {
                results.add(f.get(120, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    interface ThreadTask<T> {
        T run(int thread) throws Exception;
    }

    @Test
    @DisplayName("one hot account: exact, never negative, journal = applied deductions")
    void hotAccount() throws Exception {
        String account = "hot-" + UUID.randomUUID();
        long initial = 30_000;
        assertThat(first.open(account, initial)).isInstanceOf(Outcome.Applied.class);
        int perThread = 150; // 9,600 attempts of 1..10: about 53,000 wanted, so the account runs dry part-way

        List<long[]> perThreadTotals = race(THREADS, thread -> {
            QuotaService quota = clientOf(thread);
            long applied = 0;
            long count = 0;
            for (int i = 0; i < perThread; i++) {
                long amount = 1 + ThreadLocalRandom.current().nextInt(10);
                Outcome outcome = quota.deduct(account, amount, "t" + thread + "-" + i + "-" + UUID.randomUUID());
                if (outcome instanceof Outcome.Applied a) {
                    assertThat(a.balance()).isNotNegative();
                    applied += amount;
                    count++;
                } else if (outcome instanceof Outcome.Insufficient in) {
                    assertThat(in.balance()).isNotNegative().isLessThan(amount);
                } else {
                    throw new AssertionError("unexpected " + outcome);
                }
            }
            return new long[] {applied, count};
        });

        long appliedSum = perThreadTotals.stream().mapToLong(a -> a[0]).sum();
        long appliedCount = perThreadTotals.stream().mapToLong(a -> a[1]).sum();
        long balance = first.balance(account).orElseThrow();
        assertThat(balance).isNotNegative().isEqualTo(initial - appliedSum);
        assertThat(balance).as("the account ran dry, so insufficient was exercised").isLessThan(10);
        List<Journal.Entry> deductions = Journal.read(nodeOf(LAYOUT.journalOf(account)), LAYOUT.journalOf(account)).stream()
                .filter(e -> e.account().equals(account) && e.kind().equals("deduct")).toList();
        assertThat(deductions).hasSize((int) appliedCount);
        assertThat(deductions.stream().mapToLong(Journal.Entry::amount).sum()).isEqualTo(initial - balance);
        assertThat(deductions).allSatisfy(e -> assertThat(e.balance()).isNotNegative());
        // The journal, in stream order, replays to every intermediate balance.
        long running = initial;
        for (Journal.Entry e : deductions) {
            running -= e.amount();
            assertThat(e.balance()).isEqualTo(running);
        }
    }

    @Test
    @DisplayName("1,000 accounts: every balance exact, never negative; journal = applied deductions")
    void thousandAccounts() throws Exception {
        String run = UUID.randomUUID().toString();
        int accounts = 1_000;
        long initial = 100;
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < accounts; i++) {
            ids.add("acct-" + i + "-" + run);
        }
        for (String id : ids) {
            assertThat(first.open(id, initial)).isInstanceOf(Outcome.Applied.class);
        }
        Map<String, AtomicLong> applied = new ConcurrentHashMap<>();
        ids.forEach(id -> applied.put(id, new AtomicLong()));
        AtomicLong appliedCount = new AtomicLong();
        int perThread = 300; // 19,200 attempts of 1..10 over 100,000 of quota: about 105,600 wanted

        race(THREADS, thread -> {
            QuotaService quota = clientOf(thread);
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int i = 0; i < perThread; i += 4) {
                if (i % 8 == 0) {
                    // every other round goes as a pipelined batch of four
                    List<Deduction> batch = new ArrayList<>();
                    for (int k = 0; k < 4; k++) {
                        batch.add(new Deduction(ids.get(random.nextInt(accounts)), 1 + random.nextInt(10),
                                UUID.randomUUID().toString()));
                    }
                    List<Outcome> outcomes = quota.deductAll(batch);
                    for (int k = 0; k < 4; k++) {
                        record(batch.get(k).account(), batch.get(k).amount(), outcomes.get(k), applied, appliedCount);
                    }
                } else {
                    for (int k = 0; k < 4; k++) {
                        String id = ids.get(random.nextInt(accounts));
                        long amount = 1 + random.nextInt(10);
                        Outcome outcome = k % 2 == 0 ? quota.deduct(id, amount, UUID.randomUUID().toString())
                                : quota.deductAsync(id, amount, UUID.randomUUID().toString()).toCompletableFuture()
                                        .get(30, TimeUnit.SECONDS);
                        record(id, amount, outcome, applied, appliedCount);
                    }
                }
            }
            return null;
        });

        Map<String, Long> journaled = new HashMap<>();
        long journaledCount = 0;
        for (Journal.Entry e : Journal.readAll(this::nodeOf, LAYOUT.partitions())) {
            if (e.account().endsWith(run) && e.kind().equals("deduct")) {
                journaled.merge(e.account(), e.amount(), Long::sum);
                journaledCount++;
            }
        }
        assertThat(journaledCount).isEqualTo(appliedCount.get());
        int dry = 0;
        for (String id : ids) {
            long balance = second.balance(id).orElseThrow();
            assertThat(balance).as(id).isNotNegative().isEqualTo(initial - applied.get(id).get());
            assertThat(journaled.getOrDefault(id, 0L)).as(id).isEqualTo(initial - balance);
            if (balance < 10) {
                dry++;
            }
        }
        assertThat(dry).as("many accounts ran dry, so insufficient was exercised").isGreaterThan(100);
    }

    private static void record(String account, long amount, Outcome outcome, Map<String, AtomicLong> applied,
                               AtomicLong appliedCount) {
        if (outcome instanceof Outcome.Applied a) {
            assertThat(a.balance()).isNotNegative();
            applied.get(account).addAndGet(amount);
            appliedCount.incrementAndGet();
        } else if (outcome instanceof Outcome.Insufficient in) {
            assertThat(in.balance()).isNotNegative().isLessThan(amount);
        } else {
            throw new AssertionError("unexpected " + outcome);
        }
    }

    @Test
    @DisplayName("the same request id sent 50 times at once, from two clients, deducts once")
    void sameRequestFiftyTimes() throws Exception {
        String account = "m-" + UUID.randomUUID();
        String request = "order-" + UUID.randomUUID();
        first.open(account, 1_000);

        List<Outcome> outcomes = race(50, thread -> thread % 3 == 0
                ? clientOf(thread).deductAsync(account, 250, request).toCompletableFuture().get(30, TimeUnit.SECONDS)
                : clientOf(thread).deduct(account, 250, request));

        Map<Outcome.Status, Long> byStatus = outcomes.stream()
                .collect(Collectors.groupingBy(Outcome::status, Collectors.counting()));
        assertThat(byStatus).containsOnly(Map.entry(Outcome.Status.APPLIED, 1L), Map.entry(Outcome.Status.DUPLICATE, 49L));
        Outcome.Applied original = outcomes.stream().filter(o -> o instanceof Outcome.Applied)
                .map(o -> (Outcome.Applied) o).findFirst().orElseThrow();
        assertThat(original.balance()).isEqualTo(750);
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Duplicate)
                .allSatisfy(o -> assertThat(((Outcome.Duplicate) o).original()).isEqualTo(original));
        assertThat(first.balance(account)).hasValue(750);
        assertThat(Journal.read(nodeOf(LAYOUT.journalOf(account)), LAYOUT.journalOf(account)))
                .filteredOn(e -> e.request().equals(request)).hasSize(1);
    }
}
