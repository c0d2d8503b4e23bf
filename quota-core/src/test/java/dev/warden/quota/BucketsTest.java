package dev.warden.quota;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.quota.internal.Scripts;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.zip.CRC32;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Split (bucketed) hot accounts against a real redis-server: two clients, exhaustion to the last unit,
 * split and merge while deductions run, crash-safe moves, fencing and bad input.
 */
class BucketsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final int PARTITIONS = 16;
    static final KeyLayout LAYOUT = new KeyLayout(PARTITIONS);
    static QuotaService a;
    static QuotaService b;

    @BeforeAll
    static void connect() {
        a = QuotaService.create(settings());
        b = QuotaService.create(settings());
    }

    @AfterAll
    static void close() {
        a.close();
        b.close();
    }

    static Map<String, String> settings() {
        return ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.partitions", Integer.toString(PARTITIONS)));
    }

    static String opened(long balance) {
        String account = "hot-" + UUID.randomUUID();
        assertThat(a.open(account, balance)).isInstanceOf(Outcome.Applied.class);
        return account;
    }

    static long bucketBalance(String account, int i) {
        String v = (String) redis.server().command("HGET", LAYOUT.bucketKey(account, i), "balance");
        return v == null ? 0 : Long.parseLong(v);
    }

    static long rawSum(String account, int n) {
        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += bucketBalance(account, i);
        }
        return sum;
    }

    static List<Journal.Entry> journal(String account) {
        return Journal.readAll(redis.server(), PARTITIONS).stream().filter(e -> e.account().equals(account)).toList();
    }

    /** What the journal says the account holds: the opening, plus credits, minus deductions; moves are net zero. */
    static long journaled(String account) {
        long sum = 0;
        for (Journal.Entry e : journal(account)) {
            sum += switch (e.kind()) {
                case "open", "topup", "refund", "movein" -> e.amount();
                case "deduct", "moveout" -> -e.amount();
                default -> throw new AssertionError("unexpected entry " + e);
            };
        }
        return sum;
    }

    /** The bucket a request id goes to, as the engine routes it. */
    static int route(String requestId, int buckets) {
        CRC32 crc = new CRC32();
        crc.update(("route:" + requestId).getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % buckets);
    }

    static long applied(Outcome o) {
        return o instanceof Outcome.Applied ? 1 : 0;
    }

    @Nested
    @DisplayName("split")
    class SplitAccount {

        @Test
        @DisplayName("spreads the balance evenly over 8 buckets in 8 partitions; the balance is their sum")
        void spreads() {
            String account = opened(8_007);

            assertThat(a.split(account, 8)).isEqualTo(new SplitOutcome.Split(8));

            assertThat(a.balance(account)).hasValue(8_007);
            assertThat(b.balance(account)).hasValue(8_007);
            assertThat(bucketBalance(account, 0)).isEqualTo(1_007);
            Set<Integer> partitions = new HashSet<>();
            for (int i = 1; i < 8; i++) {
                assertThat(bucketBalance(account, i)).as("bucket %d", i).isEqualTo(1_000);
                partitions.add(LAYOUT.bucketPartition(account, i));
            }
            partitions.add(LAYOUT.partition(account));
            assertThat(partitions).hasSize(8);
            assertThat(a.split(account, 4)).isEqualTo(new SplitOutcome.AlreadySplit(8));
            assertThat(journaled(account)).isEqualTo(8_007);
        }

        @Test
        @DisplayName("bad input: a bucket count out of 2..64, an invalid id, an unknown account")
        void badInput() {
            String account = opened(10);
            assertThatThrownBy(() -> a.split(account, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> a.split(account, QuotaService.MAX_BUCKETS + 1)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> a.split("a:b", 8)).isInstanceOf(InvalidIdException.class);
            assertThatThrownBy(() -> a.merge("a{b")).isInstanceOf(InvalidIdException.class);
            // Unknown accounts in the opened account's partition (one without a marker answers DATA_LOST instead).
            assertThat(a.split(neighbourOf(account), 8)).isInstanceOf(SplitOutcome.AccountNotFound.class);
            assertThat(a.merge(neighbourOf(account))).isInstanceOf(SplitOutcome.AccountNotFound.class);
            assertThat(a.merge(account)).isEqualTo(new SplitOutcome.NotSplit());
            assertThat(a.split(account, 8)).isEqualTo(new SplitOutcome.Split(8));
            assertThat(a.deduct(account, 0, "zero")).isEqualTo(new Outcome.InvalidAmount(AmountProblem.ZERO));
            assertThat(a.balance(account)).hasValue(10);
        }

        private String neighbourOf(String account) {
            while (true) {
                String candidate = "nobody-" + UUID.randomUUID();
                if (LAYOUT.partition(candidate) == LAYOUT.partition(account)) {
                    return candidate;
                }
            }
        }

        @Test
        @DisplayName("opened split: the balance spread at once; a bucket count out of range opens nothing")
        void openedSplit() {
            String account = "hot-" + UUID.randomUUID();
            assertThatThrownBy(() -> a.open(account, 800, 1)).isInstanceOf(IllegalArgumentException.class);
            assertThat(a.balance(account)).isEmpty();
            Outcome opened = a.open(account, 800, 8);
            assertThat(opened).isEqualTo(new Outcome.Applied(800,
                    journal(account).stream().filter(e -> e.kind().equals("open")).findFirst().orElseThrow().id()));
            for (int i = 0; i < 8; i++) {
                assertThat(bucketBalance(account, i)).isEqualTo(100);
            }
            assertThat(b.open(account, 800, 8)).isEqualTo(new Outcome.AccountExists(800));
            assertThat(b.split(account, 8)).isEqualTo(new SplitOutcome.AlreadySplit(8));
        }

        @Test
        @DisplayName("a batch (deductAll) and asynchronous deductions of a split account: each applied once, in its bucket")
        void batchAndAsync() throws Exception {
            String account = opened(8_000);
            String plain = opened(100);
            a.split(account, 8);
            List<Deduction> batch = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                batch.add(new Deduction(i % 10 == 0 ? plain : account, 10, "b" + i));
            }
            assertThat(b.deductAll(batch)).allMatch(o -> o instanceof Outcome.Applied);
            assertThat(a.deductAll(batch)).allMatch(o -> o instanceof Outcome.Duplicate);
            assertThat(b.deductAsync(account, 5, "async").toCompletableFuture().get(30, TimeUnit.SECONDS))
                    .isInstanceOf(Outcome.Applied.class);
            assertThat(a.balance(account)).hasValue(8_000 - 36 * 10 - 5);
            assertThat(a.balance(plain)).hasValue(60);
            assertThat(journaled(account)).isEqualTo(8_000 - 36 * 10 - 5);
        }

        @Test
        @DisplayName("top-ups and refunds go to a bucket and count in the sum")
        void credits() {
            String account = opened(800);
            a.split(account, 8);
            assertThat(b.topUp(account, 50, "t1").isApplied()).isTrue();
            assertThat(a.refund(account, 7, "r1").isApplied()).isTrue();
            assertThat(b.topUp(account, 50, "t1")).isInstanceOf(Outcome.Duplicate.class);
            assertThat(a.balance(account)).hasValue(857);
            assertThat(journaled(account)).isEqualTo(857);
        }
    }

    @Nested
    @DisplayName("exact exhaustion")
    class Exhaustion {

        @Test
        @DisplayName("one caller: refused exactly when the account's total is short; the last unit is spendable")
        void lastUnit() {
            String account = opened(1_000);
            a.split(account, 8);
            Random random = new Random(17);
            long spent = 0;
            int refusals = 0;
            for (int i = 0; ; i++) {
                long total = a.balance(account).orElseThrow();
                if (total == 0) {
                    break;
                }
                long amount = 1 + random.nextInt(60);
                Outcome o = (i % 2 == 0 ? a : b).deduct(account, amount, "d" + i);
                if (amount <= total) {
                    assertThat(o).as("deduction %d of %d with %d left", i, amount, total).isInstanceOf(Outcome.Applied.class);
                    spent += amount;
                } else {
                    assertThat(o).as("deduction %d of %d with %d left", i, amount, total)
                            .isEqualTo(new Outcome.Insufficient(total));
                    refusals++;
                    assertThat(a.deduct(account, total, "last" + i)).isInstanceOf(Outcome.Applied.class);
                    spent += total;
                }
            }
            assertThat(spent).isEqualTo(1_000);
            assertThat(refusals).isPositive();
            assertThat(a.deduct(account, 1, "one-more")).isEqualTo(new Outcome.Insufficient(0));
            assertThat(rawSum(account, 8)).isZero();
            assertThat(journaled(account)).isZero();
        }

        @Test
        @DisplayName("8 buckets, 200 threads, 2 clients, random amounts until exhaustion: Σ applied = initial − final,"
                + " no bucket negative, the rest spendable to the last unit, the journal agrees")
        void twoHundredThreads() throws Exception {
            long initial = 40_000;
            String account = opened(initial);
            assertThat(a.split(account, 8)).isEqualTo(new SplitOutcome.Split(8));
            int threads = 200;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CyclicBarrier start = new CyclicBarrier(threads);
            AtomicLong applied = new AtomicLong();
            AtomicLong count = new AtomicLong();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
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
                        if (o instanceof Outcome.Applied) {
                            applied.addAndGet(amount);
                            count.incrementAndGet();
                        } else {
                            assertThat(o).isInstanceOf(Outcome.Insufficient.class);
                            return null;
                        }
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();

            long last = a.balance(account).orElseThrow();
            assertThat(applied.get()).isEqualTo(initial - last);
            for (int i = 0; i < 8; i++) {
                assertThat(bucketBalance(account, i)).as("bucket %d", i).isNotNegative();
            }
            assertThat(rawSum(account, 8)).isEqualTo(last);
            if (last > 0) {
                assertThat(b.deduct(account, last, "the-rest")).isInstanceOf(Outcome.Applied.class);
            }
            assertThat(a.deduct(account, 1, "one-more")).isEqualTo(new Outcome.Insufficient(0));
            assertThat(a.balance(account)).hasValue(0);
            List<Journal.Entry> entries = journal(account);
            assertThat(entries.stream().filter(e -> e.kind().equals("deduct")).mapToLong(Journal.Entry::amount).sum())
                    .isEqualTo(initial);
            assertThat(entries.stream().filter(e -> e.kind().equals("deduct")).count()).isEqualTo(count.get() + (last > 0 ? 1 : 0));
            assertThat(journaled(account)).isZero();
            assertThat(count.get()).isGreaterThan(1_000);
        }
    }

    @Nested
    @DisplayName("split and merge online")
    class Online {

        @Test
        @DisplayName("a merge whose buckets together hold more than one balance may (2^53-1) answers TooLarge and changes nothing")
        void mergeBeyondOneBalance() {
            String account = opened(Amount.MAX - 1);
            assertThat(a.split(account, 2)).isEqualTo(new SplitOutcome.Split(2));
            long credited = 0;
            for (int i = 0; i < 4; i++) {
                Outcome o = a.topUp(account, Amount.MAX / 4, "big-" + i); // each bucket takes at most 2^53-1
                if (o instanceof Outcome.Applied) {
                    credited += Amount.MAX / 4;
                }
            }
            assertThat(credited).isPositive();
            long total = Amount.MAX - 1 + credited;
            assertThat(a.balance(account)).hasValue(total);
            assertThat(a.merge(account)).isEqualTo(new SplitOutcome.TooLarge(total));
            assertThat(a.balance(account)).hasValue(total);
            assertThat(a.split(account, 2)).isEqualTo(new SplitOutcome.AlreadySplit(2));
        }

        @Test
        @DisplayName("merge empties the buckets into the account key; the account is one again")
        void merge() {
            String account = opened(8_000);
            a.split(account, 8);
            for (int i = 0; i < 40; i++) {
                assertThat(b.deduct(account, 7, "d" + i)).isInstanceOf(Outcome.Applied.class);
            }
            assertThat(a.merge(account)).isEqualTo(new SplitOutcome.Merged(8));

            assertThat(Journal.balanceField(redis.server(), LAYOUT.accountKey(account))).isEqualTo("7720");
            assertThat(redis.server().command("HGET", LAYOUT.accountKey(account), "buckets")).isNull();
            assertThat(redis.server().command("HGET", LAYOUT.accountKey(account), "drain")).isNull();
            for (int i = 1; i < 8; i++) {
                // Emptied, closed, then deleted: a merged account leaves no bucket behind.
                assertThat(redis.server().command("EXISTS", LAYOUT.bucketKey(account, i))).isEqualTo(0L);
                assertThat(redis.server().command("HLEN", LAYOUT.movesKey(account, i))).isEqualTo(0L);
            }
            // b still believes in 8 buckets: its next deduction finds the split gone and goes to the account key.
            Outcome after = b.deduct(account, 20, "after");
            assertThat(after).isInstanceOf(Outcome.Applied.class);
            assertThat(a.deduct(account, 20, "after")).isEqualTo(new Outcome.Duplicate((Outcome.Applied) after));
            assertThat(b.balance(account)).hasValue(7_700);
            assertThat(a.merge(account)).isEqualTo(new SplitOutcome.NotSplit());
            assertThat(a.split(account, 4)).isEqualTo(new SplitOutcome.Split(4));
            assertThat(b.balance(account)).hasValue(7_700);
            assertThat(journaled(account)).isEqualTo(7_700);
        }

        @Test
        @DisplayName("split and merge while 16 threads of 2 clients deduct: nothing lost or doubled")
        void whileDeducting() throws Exception {
            long initial = 1_000_000;
            String account = opened(initial);
            int threads = 16;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<String> appliedIds = new ConcurrentLinkedQueue<>();
            AtomicLong applied = new AtomicLong();
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    QuotaService client = id % 2 == 0 ? a : b;
                    Random random = new Random(id);
                    for (int i = 0; !stop.get(); i++) {
                        long amount = 1 + random.nextInt(5);
                        String request = "w" + id + "-" + i;
                        Outcome o = i % 3 == 0 ? client.deductAsync(account, amount, request).toCompletableFuture()
                                .get(30, TimeUnit.SECONDS) : client.deduct(account, amount, request);
                        assertThat(o).isInstanceOf(Outcome.Applied.class);
                        applied.addAndGet(amount);
                        appliedIds.add(request);
                    }
                    return null;
                }));
            }
            int[] shapes = {8, 3, 8, 5};
            for (int shape : shapes) {
                long before = applied.get();
                assertThat(a.split(account, shape)).isEqualTo(new SplitOutcome.Split(shape));
                Await.until(Duration.ofSeconds(20), "deductions while split", () -> applied.get() > before + 200);
                long mid = applied.get();
                assertThat((shape % 2 == 0 ? a : b).merge(account)).isEqualTo(new SplitOutcome.Merged(shape));
                Await.until(Duration.ofSeconds(20), "deductions after the merge", () -> applied.get() > mid + 200);
            }
            stop.set(true);
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            pool.shutdown();

            assertThat(a.balance(account)).hasValue(initial - applied.get());
            assertThat(Journal.balanceField(redis.server(), LAYOUT.accountKey(account)))
                    .isEqualTo(Long.toString(initial - applied.get()));
            Map<String, Long> deductions = new HashMap<>();
            for (Journal.Entry e : journal(account)) {
                if (e.kind().equals("deduct")) {
                    deductions.merge(e.request(), 1L, Long::sum);
                }
            }
            assertThat(deductions).hasSize(appliedIds.size());
            assertThat(deductions.values()).containsOnly(1L);
            assertThat(journaled(account)).isEqualTo(initial - applied.get());
        }
    }

    @Nested
    @DisplayName("idempotency")
    class Idempotency {

        @Test
        @DisplayName("a retry within a split reaches the bucket of its first try: DUPLICATE")
        void retryWithinSplit() {
            String account = opened(800);
            a.split(account, 8);
            Outcome first = a.deduct(account, 5, "r1");
            assertThat(b.deduct(account, 5, "r1")).isEqualTo(new Outcome.Duplicate((Outcome.Applied) first));
            assertThat(a.balance(account)).hasValue(795);
        }

        @Test
        @DisplayName("a charge retried through an engine that has not yet seen the split answers as its first try,"
                + " unpriced: its record read, sent beside the balance read, is made again at the bucket")
        void chargeRetryLearnsTheSplit() {
            String account = opened(800);
            a.split(account, 8);
            Outcome first = a.charge(account, "c1", balance -> 5);
            assertThat(first).isInstanceOf(Outcome.Applied.class);
            try (QuotaService fresh = QuotaService.create(settings())) {
                assertThat(fresh.charge(account, "c1", balance -> 7)).isEqualTo(new Outcome.Duplicate((Outcome.Applied) first));
            }
            assertThat(a.balance(account)).hasValue(795);
        }

        @Test
        @DisplayName("a retry crossing a split to another bucket is applied again in Redis (the ledger compensates it);"
                + " one whose bucket is 0 is a DUPLICATE")
        void retryAcrossSplit() {
            String account = opened(800);
            String elsewhere = "x0";
            for (int i = 1; route(elsewhere, 8) == 0; i++) {
                elsewhere = "x" + i;
            }
            String home = "y0";
            for (int i = 1; route(home, 8) != 0; i++) {
                home = "y" + i;
            }
            a.deduct(account, 5, elsewhere);
            a.deduct(account, 5, home);
            a.split(account, 8);

            assertThat(a.deduct(account, 5, home)).isInstanceOf(Outcome.Duplicate.class);
            assertThat(a.deduct(account, 5, elsewhere)).isInstanceOf(Outcome.Applied.class);
            assertThat(a.balance(account)).hasValue(785);
            String request = elsewhere;
            assertThat(journal(account)).filteredOn(e -> e.request().equals(request)).hasSize(2);
        }
    }

    @Nested
    @DisplayName("moves")
    class Moves {

        @Test
        @DisplayName("a process dying between take and give, or give and finish, loses nothing: the next balance read"
                + " completes the move, once")
        void crashBetweenTakeAndGive() {
            String account = opened(8_000);
            a.split(account, 8);
            int from = 3;
            int to = 5;
            int p = LAYOUT.bucketPartition(account, from);
            Object reply = redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.BUCKETS), "4",
                    LAYOUT.marker(p), LAYOUT.bucketKey(account, from), LAYOUT.journal(p), LAYOUT.movesKey(account, from),
                    "take", account, Integer.toString(from), LAYOUT.markerValue(), "8", "mv-crash", Integer.toString(to),
                    "400", "1");
            assertThat(reply).isEqualTo(List.of("taken", "400"));
            assertThat(rawSum(account, 8)).isEqualTo(7_600);

            assertThat(b.balance(account)).hasValue(8_000);
            assertThat(bucketBalance(account, to)).isEqualTo(1_400);
            assertThat(redis.server().command("HLEN", LAYOUT.movesKey(account, from))).isEqualTo(0L);
            assertThat(a.balance(account)).hasValue(8_000);
            assertThat(journal(account)).filteredOn(e -> e.request().equals("mv-crash"))
                    .extracting(Journal.Entry::kind).containsExactlyInAnyOrder("moveout", "movein");
            assertThat(journaled(account)).isEqualTo(8_000);

            // Dying after the give, before the finish: the next settling finds the give's record and only finishes.
            redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.BUCKETS), "4",
                    LAYOUT.marker(p), LAYOUT.bucketKey(account, from), LAYOUT.journal(p), LAYOUT.movesKey(account, from),
                    "take", account, Integer.toString(from), LAYOUT.markerValue(), "8", "mv-given", Integer.toString(to),
                    "300", "1");
            int q = LAYOUT.bucketPartition(account, to);
            assertThat(redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.BUCKETS), "4",
                    LAYOUT.marker(q), LAYOUT.bucketKey(account, to), LAYOUT.journal(q), LAYOUT.movedKey(account, to, "mv-given"),
                    "give", account, Integer.toString(to), LAYOUT.markerValue(), "mv-given", "300", "60000"))
                    .isEqualTo(List.of("given"));
            assertThat(a.balance(account)).hasValue(8_000);
            assertThat(bucketBalance(account, to)).isEqualTo(1_700);
            assertThat(redis.server().command("HLEN", LAYOUT.movesKey(account, from))).isEqualTo(0L);
            assertThat(journal(account)).filteredOn(e -> e.request().equals("mv-given"))
                    .extracting(Journal.Entry::kind).containsExactlyInAnyOrder("moveout", "movein");
            assertThat(journaled(account)).isEqualTo(8_000);
        }

        @Test
        @DisplayName("a deduction whose round finds only quota in flight (taken, not yet given) completes the move and"
                + " is applied, on either end of the move")
        void inFlightIsNotARefusal() {
            for (int target = 0; target < 2; target++) {
                String account = opened(100);
                a.split(account, 2);
                String drain = "d0";
                for (int i = 1; route(drain, 2) != target; i++) {
                    drain = "d" + i;
                }
                assertThat(a.deduct(account, 50, drain)).isInstanceOf(Outcome.Applied.class);
                int from = 1 - target;
                int p = LAYOUT.bucketPartition(account, from);
                redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.BUCKETS), "4",
                        LAYOUT.marker(p), LAYOUT.bucketKey(account, from), LAYOUT.journal(p), LAYOUT.movesKey(account, from),
                        "take", account, Integer.toString(from), LAYOUT.markerValue(), "2", "mv-stuck", Integer.toString(target),
                        "50", "1");
                assertThat(rawSum(account, 2)).isZero();
                for (int end = 0; end < 2; end++) {
                    String request = "e" + end + "-0";
                    for (int i = 1; route(request, 2) != end; i++) {
                        request = "e" + end + "-" + i;
                    }
                    assertThat(b.deduct(account, 25, request)).as("target %d, deduction at %d", target, end)
                            .isInstanceOf(Outcome.Applied.class);
                }
                assertThat(a.deduct(account, 1, "none-left")).isEqualTo(new Outcome.Insufficient(0));
                assertThat(journaled(account)).isZero();
            }
        }

        @Test
        @DisplayName("a bucket closed while its split lives on (a merge raced a split): its deductions go to bucket 0,"
                + " gathering passes it, the last unit is still spendable")
        void closedBucketOfALiveSplit() {
            String account = opened(800);
            a.split(account, 8);
            int p = LAYOUT.bucketPartition(account, 3);
            redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.BUCKETS), "4",
                    LAYOUT.marker(p), LAYOUT.bucketKey(account, 3), LAYOUT.journal(p), LAYOUT.movesKey(account, 3),
                    "close", account, "3", LAYOUT.markerValue(), "-", "mv-close", "0", "0", "0");
            assertThat(b.balance(account)).hasValue(800);
            assertThat(bucketBalance(account, 0)).isEqualTo(200);
            String request = "c0";
            for (int i = 1; route(request, 8) != 3; i++) {
                request = "c" + i;
            }
            Outcome first = a.deduct(account, 10, request);
            assertThat(first).isInstanceOf(Outcome.Applied.class);
            assertThat(((Outcome.Applied) first).balance()).isEqualTo(190);
            assertThat(b.deduct(account, 10, request)).isEqualTo(new Outcome.Duplicate((Outcome.Applied) first));
            assertThat(bucketBalance(account, 0)).isEqualTo(190);
            assertThat(b.deduct(account, 790, "all")).isInstanceOf(Outcome.Applied.class);
            assertThat(b.deduct(account, 1, "one-more")).isEqualTo(new Outcome.Insufficient(0));
            assertThat(journaled(account)).isZero();
        }

        @Test
        @DisplayName("a merge finishes a move left pending, into the account key when its target bucket is closed")
        void pendingAtMerge() {
            String account = opened(8_000);
            a.split(account, 8);
            int p = LAYOUT.bucketPartition(account, 2);
            redis.server().command("EVALSHA", Scripts.digest(Scripts.Script.BUCKETS), "4",
                    LAYOUT.marker(p), LAYOUT.bucketKey(account, 2), LAYOUT.journal(p), LAYOUT.movesKey(account, 2),
                    "take", account, "2", LAYOUT.markerValue(), "8", "mv-pending", "6", "1000", "1");
            assertThat(a.merge(account)).isEqualTo(new SplitOutcome.Merged(8));
            assertThat(Journal.balanceField(redis.server(), LAYOUT.accountKey(account))).isEqualTo("8000");
            assertThat(a.balance(account)).hasValue(8_000);
            assertThat(journaled(account)).isEqualTo(8_000);
        }
    }

    @Nested
    @DisplayName("fencing")
    class Fencing {

        @Test
        @DisplayName("a fenced deduction raises every bucket's fence first: a stale token is refused wherever its request routes")
        void staleRefused() {
            String account = opened(8_000);
            a.split(account, 8);
            String lock = a.lockName(account);
            assertThat(a.deduct(account, 2_000, "f1", new TokenLease(lock, 7))).isInstanceOf(Outcome.Applied.class);
            assertThat(b.deduct(account, 5, "f2", new TokenLease(lock, 5))).isEqualTo(new Outcome.StaleFence(5, 7));
            assertThat(b.deduct(account, 5, "f3", new TokenLease(lock, 7))).isInstanceOf(Outcome.Applied.class);
            assertThat(a.deduct(account, 5, "f4")).isInstanceOf(Outcome.Applied.class);
            assertThat(a.balance(account)).hasValue(5_990);
            assertThat(journal(account)).filteredOn(e -> e.request().equals("f1"))
                    .extracting(Journal.Entry::token).containsExactly("7");
        }

        @Test
        @DisplayName("an instance that believes in an older, smaller split still fences every bucket of the split there is now")
        void staleSplitCountStillFencesEveryBucket() {
            String account = opened(8_000);
            String lock = a.lockName(account);
            assertThat(a.split(account, 2)).isEqualTo(new SplitOutcome.Split(2));
            assertThat(b.deduct(account, 1, "learn")).isInstanceOf(Outcome.Applied.class); // b caches 2 buckets
            assertThat(a.merge(account)).isEqualTo(new SplitOutcome.Merged(2));
            assertThat(a.split(account, 4)).isEqualTo(new SplitOutcome.Split(4)); // b still believes in 2
            // The superseded holder (token 5) has fenced every bucket, and pauses before its change.
            for (int i = 0; i < 4; i++) {
                assertThat(bucketScript(account, i, List.of(), "fence", "5").get(0)).isEqualTo("fenced");
            }
            // The newer holder (token 6), through b: its fence must reach buckets 2 and 3 too.
            assertThat(b.deduct(account, 1, "s1", new TokenLease(lock, 6)).isApplied()).isTrue();
            // The superseded holder resumes with its change in bucket 3 ("s2" routes there): refused.
            int p = LAYOUT.bucketPartition(account, 3);
            List<?> change = bucketScript(account, 3, List.of(LAYOUT.bucketRequestKey(account, 3, "s2"), LAYOUT.journal(p)),
                    "change", "4", "deduct", "1", "s2", "5", "60000");
            assertThat(change.stream().map(String::valueOf).toList()).containsExactly("stale_fence", "6");
        }

        private List<?> bucketScript(String account, int i, List<String> keys, String op, String... args) {
            List<String> allKeys = new ArrayList<>(List.of(LAYOUT.marker(LAYOUT.bucketPartition(account, i)),
                    LAYOUT.bucketKey(account, i)));
            allKeys.addAll(keys);
            List<String> allArgs = new ArrayList<>(List.of(op, account, Integer.toString(i), LAYOUT.markerValue()));
            allArgs.addAll(List.of(args));
            return (List<?>) redis.server().command(Scripts.eval(Scripts.Script.BUCKETS, allKeys, allArgs));
        }

        @Test
        @DisplayName("buckets a later split creates start with bucket 0's fence mark")
        void newBucketsInheritTheFence() {
            String account = opened(8_000);
            String lock = a.lockName(account);
            assertThat(a.deduct(account, 1, "t1", new TokenLease(lock, 9)).isApplied()).isTrue();
            assertThat(a.split(account, 4)).isEqualTo(new SplitOutcome.Split(4));
            for (int i = 1; i < 4; i++) {
                assertThat(redis.server().command("HGET", LAYOUT.bucketKey(account, i), "fence")).as("bucket " + i).isEqualTo("9");
            }
        }
    }

    /** A lease that is what it says: a lock name and a token, always valid (the fence is what is tested). */
    record TokenLease(String name, long fencingToken) implements Lease {
        @Override
        public boolean isValid() {
            return true;
        }

        @Override
        public Duration remaining() {
            return Duration.ofMinutes(1);
        }

        @Override
        public Instant expiresAt() {
            return Instant.EPOCH;
        }

        @Override
        public void onLost(Consumer<LeaseLost> listener) {
        }

        @Override
        public boolean setMaxHoldTime(Duration fromNow) {
            return true;
        }

        @Override
        public boolean releaseAfter(Duration delay) {
            return true;
        }

        @Override
        public ReleaseOutcome release() {
            return ReleaseOutcome.RELEASED;
        }

        @Override
        public CompletionStage<ReleaseOutcome> releaseAsync() {
            return java.util.concurrent.CompletableFuture.completedFuture(ReleaseOutcome.RELEASED);
        }

        @Override
        public void close() {
        }
    }
}
