package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Combined charges ({@code warden.quota.combine-charges}) under generated concurrent workloads, against a real
 * redis-server: callers on their own threads charge one account with request ids they share (retries), prices that
 * depend on the balance, are flat, exceed it, throw or are no amount, while another thread deducts beside them;
 * some callers blocking in {@code charge}, others with every charge in flight at once through {@code chargeAsync}.
 * Whatever the interleaving (which callers share a round, which rounds skip their reads, which balances move under
 * them): each request id applies at most once, every applied charge was priced on the exact balance it applied to (or, charged alone after moving three
 * times, on a balance read), the journal chains, and every caller's answer is what the journal says.
 */
class CombinedChargeCheckTest {

    private static final KeyLayout LAYOUT = new KeyLayout(16);
    private static final int CALLERS_MAX = 8;
    /** Request ids 0..RIDS-1; an id's kind of price is fixed by it, so the callers that share it are retries. */
    private static final int RIDS = 60;
    /** Rounds a charge whose balance moved is priced in before it is charged alone (CombinedRound.PRICED_AGAIN). */
    private static final int CHARGED_ALONE_AFTER = 3;

    private static RedisServer redis;
    private static QuotaService locked;
    private static QuotaService unlocked;
    private static QuotaService plain;
    private static ExecutorService threads;
    private static long calls;
    private static long asyncCalls;

    @BeforeContainer
    static void start() {
        redis = RedisServer.start();
        Map<String, String> combined = ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.uri(),
                "warden.quota.combine-charges", "true"));
        unlocked = QuotaService.create(combined);
        combined.putAll(Map.of("warden.quota.lock", "redis", "warden.lock.namespace", "combined-properties",
                "warden.lock.ttl", "10s"));
        locked = QuotaService.create(combined);
        plain = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.uri())));
        threads = Executors.newFixedThreadPool(CALLERS_MAX + 1);
    }

    @AfterContainer
    static void stop() {
        System.out.printf("combined charge checker: %d charges checked, %d of them asynchronous%n", calls, asyncCalls);
        threads.shutdownNow();
        try (RedisServer r = redis) {
            for (QuotaService q : new QuotaService[] {locked, unlocked, plain}) {
                if (q != null) {
                    q.close();
                }
            }
        }
    }

    /** How a request id prices: fixed per id, so the calls sharing an id are retries of one charge. */
    enum Kind {
        BALANCE, FLAT, TOO_MUCH, THROWS, ZERO;

        static Kind of(int rid) {
            return switch (rid % 10) {
                case 6 -> FLAT;
                case 7 -> TOO_MUCH;
                case 8 -> THROWS;
                case 9 -> ZERO;
                default -> BALANCE;
            };
        }

        long price(long balance) {
            return switch (this) {
                case BALANCE -> 1 + balance % 5;
                case FLAT -> 3;
                case TOO_MUCH -> balance + 1;
                case THROWS -> throw new IllegalStateException("no price");
                case ZERO -> 0;
            };
        }
    }

    /**
     * @param asyncCallers bit i set: caller i uses {@code chargeAsync}, all its charges in flight at once, instead of
     *                     {@code charge} one after the other
     */
    record Workload(boolean underLock, long opening, List<List<Integer>> callers, int outside, int asyncCallers) {
        boolean async(int caller) {
            return (asyncCallers & (1 << caller)) != 0;
        }

        @Override
        public String toString() {
            return (underLock ? "locked" : "unlocked") + ", opening " + opening + ", outside deductions " + outside
                    + ", callers' request ids " + callers + ", asynchronous callers (bits) " + Integer.toBinaryString(asyncCallers);
        }
    }

    /** One call: its request id, every balance its pricing was called with, and its answer or exception. */
    private static final class Call {
        final int rid;
        final List<Long> pricedOn = new CopyOnWriteArrayList<>();
        Object answer;

        Call(int rid) {
            this.rid = rid;
        }

        String requestId() {
            return "c-" + rid;
        }

        Kind kind() {
            return Kind.of(rid);
        }

        long lastPrice() {
            return pricedOn.get(pricedOn.size() - 1);
        }

        @Override
        public String toString() {
            return requestId() + " priced on " + pricedOn + ", answered " + answer;
        }
    }

    private static Throwable unwrapped(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    @Provide
    Arbitrary<Workload> workloads() {
        Arbitrary<List<Integer>> caller = Arbitraries.integers().between(0, RIDS - 1).list().ofMinSize(1).ofMaxSize(25);
        return Combinators.combine(Arbitraries.of(true, false), Arbitraries.longs().between(20, 400),
                caller.list().ofMinSize(2).ofMaxSize(CALLERS_MAX), Arbitraries.integers().between(0, 15),
                Arbitraries.integers().between(0, (1 << CALLERS_MAX) - 1))
                .as(Workload::new);
    }

    @Property(tries = 40, shrinking = ShrinkingMode.BOUNDED)
    void everyChargeAppliedOnceOnTheBalanceItWasPricedOn(@ForAll("workloads") Workload w) throws Exception {
        QuotaService quota = w.underLock() ? locked : unlocked;
        String account = "p-" + UUID.randomUUID();
        assertThat(quota.open(account, w.opening())).isInstanceOf(Outcome.Applied.class);
        CountDownLatch go = new CountDownLatch(1);
        List<Call> all = new ArrayList<>();
        List<Future<?>> running = new ArrayList<>();
        for (int caller = 0; caller < w.callers().size(); caller++) {
            List<Call> mine = w.callers().get(caller).stream().map(Call::new).toList();
            all.addAll(mine);
            boolean async = w.async(caller);
            if (async) {
                asyncCalls += mine.size();
            }
            running.add(threads.submit(() -> {
                go.await();
                if (async) {
                    List<CompletableFuture<?>> answers = new ArrayList<>();
                    for (Call c : mine) {
                        answers.add(quota.chargeAsync(account, c.requestId(), balance -> {
                            c.pricedOn.add(balance);
                            return c.kind().price(balance);
                        }).toCompletableFuture().handle((outcome, e) -> c.answer = e != null ? unwrapped(e) : outcome));
                    }
                    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
                    return null;
                }
                for (Call c : mine) {
                    try {
                        c.answer = quota.charge(account, c.requestId(), balance -> {
                            c.pricedOn.add(balance);
                            return c.kind().price(balance);
                        });
                    } catch (RuntimeException e) {
                        c.answer = e;
                    }
                }
                return null;
            }));
        }
        Map<String, Outcome> outside = new java.util.concurrent.ConcurrentHashMap<>();
        running.add(threads.submit(() -> {
            go.await();
            for (int i = 0; i < w.outside(); i++) {
                outside.put("outside-" + i, plain.deduct(account, 1, "outside-" + i));
            }
            return null;
        }));
        go.countDown();
        for (Future<?> f : running) {
            f.get(60, TimeUnit.SECONDS);
        }
        calls += all.size();

        List<Journal.Entry> entries = Journal.read(redis, LAYOUT.journalOf(account)).stream()
                .filter(e -> e.account().equals(account)).toList();
        assertThat(entries.get(0).balance()).as("the opening").isEqualTo(w.opening());
        Map<String, List<Call>> byRid = all.stream().collect(Collectors.groupingBy(Call::requestId));
        Map<String, Journal.Entry> applied = new HashMap<>();
        long balance = w.opening();
        for (Journal.Entry e : entries.subList(1, entries.size())) {
            assertThat(e.kind()).isEqualTo("deduct");
            assertThat(e.amount()).as("entry %s", e.request()).isPositive();
            assertThat(e.balance()).as("entry %s chains", e.request()).isEqualTo(balance - e.amount());
            assertThat(applied.put(e.request(), e)).as("request %s applied once", e.request()).isNull();
            if (e.request().startsWith("c-")) {
                List<Call> tries = byRid.get(e.request());
                Kind kind = tries.get(0).kind();
                assertThat(kind).as("only a payable price applies").isIn(Kind.BALANCE, Kind.FLAT);
                long before = balance;
                assertThat(tries).as("%s applied %d on %d: one of its calls priced it on exactly that balance, or"
                        + " charged it alone on a balance read", e.request(), e.amount(), before)
                        .anySatisfy(c -> assertThat(!c.pricedOn.isEmpty() && e.amount() == kind.price(c.lastPrice())
                                && (c.lastPrice() == before || c.pricedOn.size() > CHARGED_ALONE_AFTER)).isTrue());
            }
            balance = e.balance();
        }
        outside.forEach((rid, outcome) -> {
            Journal.Entry e = applied.get(rid);
            assertThat(outcome).as(rid).isEqualTo(e != null ? new Outcome.Applied(e.balance(), e.id()) : new Outcome.Insufficient(0));
        });
        assertThat(quota.balance(account)).hasValue(balance);

        for (Map.Entry<String, List<Call>> group : byRid.entrySet()) {
            Journal.Entry e = applied.get(group.getKey());
            List<Object> answers = group.getValue().stream().map(c -> c.answer).toList();
            String what = group.getKey() + " (" + group.getValue().get(0).kind() + ") answered " + answers;
            if (e != null) {
                Outcome.Applied first = new Outcome.Applied(e.balance(), e.id());
                assertThat(answers).as(what).isSubsetOf(first, new Outcome.Duplicate(first));
                assertThat(answers).as(what).filteredOn(first::equals).hasSize(1);
                continue;
            }
            switch (group.getValue().get(0).kind()) {
                case BALANCE, FLAT, TOO_MUCH -> assertThat(answers).as(what).allSatisfy(a ->
                        assertThat(a).isInstanceOf(Outcome.Insufficient.class));
                case THROWS -> assertThat(answers).as(what).allSatisfy(a ->
                        assertThat(a).isInstanceOf(IllegalStateException.class).hasToString(
                                "java.lang.IllegalStateException: no price"));
                case ZERO -> assertThat(answers).as(what).allSatisfy(a ->
                        assertThat(a).isInstanceOf(Outcome.InvalidAmount.class));
            }
        }
    }
}
