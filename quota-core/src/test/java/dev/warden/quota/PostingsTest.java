package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Named balances and multi-balance postings against a real redis-server. */
class PostingsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri())));
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    /** An account with main balance 1000 and the named balances given, each funded by one posting. */
    static String account(Map<String, Long> funded) {
        String account = "merchant-" + UUID.randomUUID();
        assertThat(quota.open(account, 1_000)).isInstanceOf(Outcome.Applied.class);
        for (String name : funded.keySet()) {
            assertThat(quota.openBalance(account, name)).isEqualTo(new PostingOutcome.Opened(name));
        }
        if (!funded.isEmpty()) {
            assertThat(quota.post(account, "fund", funded)).isInstanceOf(PostingOutcome.Posted.class);
        }
        return account;
    }

    static Map<String, Long> lines(Object... nameThenDelta) {
        Map<String, Long> m = new LinkedHashMap<>();
        for (int i = 0; i < nameThenDelta.length; i += 2) {
            m.put((String) nameThenDelta[i], ((Number) nameThenDelta[i + 1]).longValue());
        }
        return m;
    }

    /** What a refused posting must leave as it was: every balance, the main balance, the journal. */
    record State(Map<Object, Object> named, Object main, long journal) {
        static State of(String account) {
            RedisServer server = redis.server();
            List<?> all = (List<?>) server.command("HGETALL", LAYOUT.balancesKey(account));
            Map<Object, Object> named = new TreeMap<>();
            for (int i = 0; i + 1 < all.size(); i += 2) {
                named.put(all.get(i), all.get(i + 1));
            }
            return new State(named, server.command("HGET", LAYOUT.accountKey(account), "balance"),
                    Journal.length(server, LAYOUT.journalOf(account)));
        }
    }

    static List<Map<String, String>> postEntries(String account) {
        List<?> page = (List<?>) redis.server().command("XRANGE", LAYOUT.journalOf(account), "-", "+");
        List<Map<String, String>> out = new ArrayList<>();
        for (Object item : page) {
            List<?> fields = (List<?>) ((List<?>) item).get(1);
            Map<String, String> f = new HashMap<>();
            for (int i = 0; i + 1 < fields.size(); i += 2) {
                f.put((String) fields.get(i), (String) fields.get(i + 1));
            }
            if (account.equals(f.get("account")) && "post".equals(f.get("kind"))) {
                out.add(f);
            }
        }
        return out;
    }

    @Nested
    @DisplayName("posting")
    class Posting {

        @Test
        @DisplayName("debits and credits several balances at once, journals one entry with its lines, leaves the main balance")
        void posts() {
            String account = account(lines("plan", 100, "points", 50, "coupons", 3));
            PostingOutcome outcome = quota.post(account, "order-1", lines("plan", -30, "points", 20, "coupons", -1));

            PostingOutcome.Posted posted = (PostingOutcome.Posted) outcome;
            assertThat(posted.balances()).containsExactly(Map.entry("coupons", 2L), Map.entry("plan", 70L),
                    Map.entry("points", 70L));
            assertThat(quota.balances(account)).hasValueSatisfying(b -> assertThat(b)
                    .isEqualTo(Map.of("plan", 70L, "points", 70L, "coupons", 2L)));
            assertThat(quota.balance(account)).hasValue(1_000);
            List<Map<String, String>> entries = postEntries(account);
            assertThat(entries).hasSize(2);
            assertThat(entries.get(1)).containsEntry("request", "order-1").containsEntry("amount", "0")
                    .containsEntry("lines", "coupons=-1,plan=-30,points=+20").containsEntry("balance", "1000");
        }

        @Test
        @DisplayName("one balance short: nothing is posted anywhere, and the outcome names that balance")
        void oneShort() {
            String account = account(lines("plan", 100, "points", 50, "coupons", 3));
            State before = State.of(account);

            PostingOutcome outcome = quota.post(account, "order-1", lines("plan", -30, "points", 20, "coupons", -4));

            assertThat(outcome).isEqualTo(new PostingOutcome.Insufficient("coupons", 3));
            assertThat(outcome.isApplied()).isFalse();
            assertThat(State.of(account)).isEqualTo(before);
            assertThat(postEntries(account)).hasSize(1); // the funding only
            // Refused, not recorded: the same request id may be used again.
            assertThat(quota.post(account, "order-1", lines("plan", -30, "coupons", -3))).isInstanceOf(PostingOutcome.Posted.class);
        }

        @Test
        @DisplayName("an unopened balance: UNKNOWN_BALANCE and nothing posted")
        void unknownBalance() {
            String account = account(lines("plan", 100));
            State before = State.of(account);

            assertThat(quota.post(account, "r", lines("plan", -1, "points", 5)))
                    .isEqualTo(new PostingOutcome.UnknownBalance("points"));
            assertThat(State.of(account)).isEqualTo(before);
        }

        @Test
        @DisplayName("a credit that would take a balance above 2^53-1: BALANCE_OVERFLOW and nothing posted")
        void overflow() {
            String account = account(lines("plan", Amount.MAX - 1, "points", 10));
            State before = State.of(account);

            assertThat(quota.post(account, "r", lines("points", -5, "plan", 2)))
                    .isEqualTo(new PostingOutcome.InvalidAmount("plan", AmountProblem.BALANCE_OVERFLOW));
            assertThat(State.of(account)).isEqualTo(before);
            assertThat(quota.post(account, "r", lines("points", -5, "plan", 1))).isInstanceOf(PostingOutcome.Posted.class);
        }

        @Test
        @DisplayName("no such account: ACCOUNT_NOT_FOUND, for posting, opening and reading")
        void noAccount() {
            String account = "ghost-" + UUID.randomUUID();
            quota.open("other-" + UUID.randomUUID(), 1); // some partition marker exists; this account's may not
            for (int p = 0; p < 16; p++) {
                redis.server().command("SET", LAYOUT.marker(p), LAYOUT.markerValue());
            }
            assertThat(quota.post(account, "r", lines("plan", 1))).isEqualTo(new PostingOutcome.AccountNotFound(account));
            assertThat(quota.openBalance(account, "plan")).isEqualTo(new PostingOutcome.AccountNotFound(account));
            assertThat(quota.balances(account)).isEmpty();
        }
    }

    @Nested
    @DisplayName("idempotency")
    class Idempotency {

        @Test
        @DisplayName("the same posting again is a duplicate with the first result, whatever the map's order")
        void duplicate() {
            String account = account(lines("plan", 100, "points", 50));
            PostingOutcome first = quota.post(account, "r1", lines("plan", -10, "points", 5));
            State after = State.of(account);

            PostingOutcome again = quota.post(account, "r1", lines("points", 5, "plan", -10));

            assertThat(again).isEqualTo(new PostingOutcome.Duplicate((PostingOutcome.Posted) first));
            assertThat(again.isApplied()).isTrue();
            assertThat(State.of(account)).isEqualTo(after);
        }

        @Test
        @DisplayName("the same request id with other lines, or used by a deduction, is a conflict; nothing changes")
        void conflict() {
            String account = account(lines("plan", 100, "points", 50));
            quota.post(account, "r1", lines("plan", -10, "points", 5));
            assertThat(quota.deduct(account, 5, "d1")).isInstanceOf(Outcome.Applied.class);
            State after = State.of(account);

            assertThat(quota.post(account, "r1", lines("plan", -11, "points", 5)))
                    .isEqualTo(new PostingOutcome.Conflict(EntryKind.POST));
            assertThat(quota.post(account, "r1", lines("plan", -10))).isEqualTo(new PostingOutcome.Conflict(EntryKind.POST));
            assertThat(quota.post(account, "d1", lines("plan", -5))).isEqualTo(new PostingOutcome.Conflict(EntryKind.DEDUCT));
            assertThat(quota.deduct(account, 5, "r1")).isInstanceOfSatisfying(Outcome.Conflict.class,
                    c -> assertThat(c.kind()).isEqualTo(EntryKind.POST));
            assertThat(State.of(account)).isEqualTo(after);
        }

        @Test
        @DisplayName("request ids are per account: another account may post with the same id")
        void perAccount() {
            String a = account(lines("plan", 10));
            String b = account(lines("plan", 10));
            assertThat(quota.post(a, "same", lines("plan", -1))).isInstanceOf(PostingOutcome.Posted.class);
            assertThat(quota.post(b, "same", lines("plan", -1))).isInstanceOf(PostingOutcome.Posted.class);
        }
    }

    @Nested
    @DisplayName("invalid input is refused before anything is written")
    class InvalidInput {

        @Test
        @DisplayName("bad balance names throw InvalidIdException(BALANCE)")
        void badNames() {
            String account = account(lines("plan", 10));
            State before = State.of(account);
            for (String name : List.of("", "Plan", "pla n", "a:b", "{p1}", "x".repeat(33), "plän")) {
                InvalidIdException e = catchThrowableOfType(InvalidIdException.class,
                        () -> quota.post(account, "r", lines("plan", -1, name, 1)));
                assertThat(e).as(name).isNotNull();
                assertThat(e.field()).isEqualTo(InvalidIdException.Field.BALANCE);
                assertThat(catchThrowableOfType(InvalidIdException.class, () -> quota.openBalance(account, name)))
                        .isNotNull();
            }
            assertThat(catchThrowableOfType(InvalidIdException.class, () -> quota.openBalance(account, "x".repeat(33))).problem())
                    .isEqualTo(InvalidIdException.Problem.TOO_LONG);
            assertThat(State.of(account)).isEqualTo(before);
        }

        @Test
        @DisplayName("zero and out-of-range amounts, an empty posting, too many balances: typed outcomes")
        void badAmountsAndShapes() {
            String account = account(lines("plan", 10, "points", 10));
            State before = State.of(account);

            assertThat(quota.post(account, "r", lines("plan", -1, "points", 0)))
                    .isEqualTo(new PostingOutcome.InvalidAmount("points", AmountProblem.ZERO));
            assertThat(quota.post(account, "r", lines("plan", Amount.MAX + 1)))
                    .isEqualTo(new PostingOutcome.InvalidAmount("plan", AmountProblem.TOO_LARGE));
            assertThat(quota.post(account, "r", lines("plan", Long.MIN_VALUE)))
                    .isEqualTo(new PostingOutcome.InvalidAmount("plan", AmountProblem.TOO_LARGE));
            assertThat(quota.post(account, "r", Map.of()))
                    .isEqualTo(new PostingOutcome.InvalidPosting(PostingOutcome.Problem.EMPTY));
            Map<String, Long> many = new TreeMap<>();
            for (int i = 0; i <= QuotaService.MAX_POSTING_LINES; i++) {
                many.put("b" + i, 1L);
            }
            assertThat(quota.post(account, "r", many))
                    .isEqualTo(new PostingOutcome.InvalidPosting(PostingOutcome.Problem.TOO_MANY_BALANCES));
            assertThat(State.of(account)).isEqualTo(before);
            assertThat(quota.post(account, "r", lines("plan", -1))).isInstanceOf(PostingOutcome.Posted.class);
        }

        @Test
        @DisplayName("opening a balance twice answers BALANCE_EXISTS with its amount")
        void openTwice() {
            String account = account(lines("plan", 42));
            assertThat(quota.openBalance(account, "plan")).isEqualTo(new PostingOutcome.BalanceExists("plan", 42));
            assertThat(quota.balances(account)).hasValue(new TreeMap<>(Map.of("plan", 42L)));
        }
    }

    @Test
    @DisplayName("concurrent postings from many threads never take any balance below zero; Σ applied matches every balance")
    void concurrent() throws Exception {
        long initial = 400;
        List<String> names = List.of("coupons", "plan", "points");
        Map<String, Long> funding = new TreeMap<>();
        names.forEach(n -> funding.put(n, initial));
        String account = account(funding);
        int threads = 8;
        int perThread = 150;
        Map<String, AtomicLong> applied = new TreeMap<>();
        names.forEach(n -> applied.put(n, new AtomicLong()));
        AtomicLong refusedShort = new AtomicLong();
        CyclicBarrier start = new CyclicBarrier(threads);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int seed = t;
                done.add(pool.submit(() -> {
                    Random random = new Random(seed);
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                        Map<String, Long> posting = new TreeMap<>();
                        for (String n : names) {
                            if (random.nextInt(3) > 0) {
                                long d = 1 + random.nextInt(9);
                                posting.put(n, random.nextInt(4) == 0 ? d : -d);
                            }
                        }
                        if (posting.isEmpty()) {
                            posting.put("plan", -1L);
                        }
                        PostingOutcome o = quota.post(account, "t" + seed + "-" + i, posting);
                        if (o instanceof PostingOutcome.Posted p) {
                            posting.forEach((n, d) -> applied.get(n).addAndGet(d));
                            p.balances().values().forEach(v -> assertThat(v).isNotNegative());
                        } else {
                            assertThat(o).isInstanceOf(PostingOutcome.Insufficient.class);
                            refusedShort.incrementAndGet();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        Map<String, Long> finalBalances = quota.balances(account).orElseThrow();
        for (String n : names) {
            assertThat(finalBalances.get(n)).as(n).isNotNegative().isEqualTo(initial + applied.get(n).get());
        }
        assertThat(refusedShort.get()).as("the workload ran some balance dry").isPositive();
        assertThat(postEntries(account)).hasSize(1 + threads * perThread - (int) refusedShort.get());
        assertThat(quota.balance(account)).hasValue(1_000);
    }
}
