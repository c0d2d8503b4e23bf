package dev.warden.quota;

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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code chargeAsync}: the answers of {@code charge} without blocking the caller, alone or combined, on a real
 * redis-server; where it runs and completes, and what it answers when the engine closes under it.
 */
@DisplayName("chargeAsync")
class ChargeAsyncTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final long WAIT_SECONDS = 30;

    private static QuotaService unlocked;
    private static QuotaService locked;
    private static QuotaService combined;

    @BeforeAll
    static void open() {
        unlocked = QuotaService.create(settings());
        locked = QuotaService.create(settings("warden.quota.lock", "redis", "warden.lock.namespace", "async-locked"));
        combined = QuotaService.create(settings("warden.quota.lock", "redis", "warden.lock.namespace", "async-combined",
                "warden.quota.combine-charges", "true"));
    }

    @AfterAll
    static void close() {
        unlocked.close();
        locked.close();
        combined.close();
    }

    private static Map<String, String> settings(String... more) {
        Map<String, String> s = ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri()));
        for (int i = 0; i + 1 < more.length; i += 2) {
            s.put(more[i], more[i + 1]);
        }
        return s;
    }

    private static String newAccount(QuotaService quota, long balance) {
        String account = "a-" + UUID.randomUUID();
        assertThat(quota.open(account, balance)).isInstanceOf(Outcome.Applied.class);
        return account;
    }

    private static Outcome answer(java.util.concurrent.CompletionStage<Outcome> stage) throws Exception {
        return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    /** The stage's failure, as the caller of {@code charge} would have caught it. */
    private static Throwable failure(java.util.concurrent.CompletionStage<Outcome> stage) throws Exception {
        try {
            Outcome o = answer(stage);
            throw new AssertionError("expected a failure, got " + o);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    @DisplayName("answers what charge answers: applied, a retry's first outcome, insufficient, the pricing's own exception")
    void answersAsChargeDoes() throws Exception {
        for (QuotaService quota : List.of(unlocked, locked, combined)) {
            String account = newAccount(quota, 100);
            Outcome answered = answer(quota.chargeAsync(account, "r-1", balance -> balance / 4));
            assertThat(answered).as("%s", quota).isInstanceOf(Outcome.Applied.class);
            Outcome.Applied first = (Outcome.Applied) answered;
            assertThat(first.balance()).isEqualTo(75);
            assertThat(answer(quota.chargeAsync(account, "r-1", balance -> 1))).as("a retry").isEqualTo(new Outcome.Duplicate(first));
            assertThat(answer(quota.chargeAsync(account, "r-2", balance -> balance + 1))).isInstanceOf(Outcome.Insufficient.class);
            IllegalStateException priceless = new IllegalStateException("no price today");
            assertThat(failure(quota.chargeAsync(account, "r-4", balance -> {
                throw priceless;
            }))).as("the pricing's exception, itself").isSameAs(priceless);
            assertThat(quota.balance(account)).as("only r-1 deducted").hasValue(75);
        }
    }

    @Test
    @DisplayName("bad ids and a missing pricing are refused before anything is queued")
    void badInputRefusedAtOnce() {
        for (QuotaService quota : List.of(unlocked, combined)) {
            assertThatThrownBy(() -> quota.chargeAsync("bad:account", "r", balance -> 1)).isInstanceOf(InvalidIdException.class);
            assertThatThrownBy(() -> quota.chargeAsync("a", "", balance -> 1)).isInstanceOf(InvalidIdException.class);
            assertThatThrownBy(() -> quota.chargeAsync("a", "r", null)).isInstanceOf(NullPointerException.class);
        }
        assertThatThrownBy(() -> QuotaService.create(settings("warden.quota.charge-threads", "0")))
                .isInstanceOfSatisfying(QuotaException.class, e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION))
                .hasMessageContaining("warden.quota.charge-threads");
    }

    @Test
    @DisplayName("prices on a charge thread and completes on neither that thread nor the caller's")
    void runsOnChargeThreadsCompletesElsewhere() throws Exception {
        for (QuotaService quota : List.of(locked, combined)) {
            String account = newAccount(quota, 100);
            CountDownLatch priced = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicReference<String> pricedOn = new AtomicReference<>();
            CompletableFuture<Outcome> stage = quota.chargeAsync(account, "r", balance -> {
                pricedOn.set(Thread.currentThread().getName());
                priced.countDown();
                await(release);
                return 1;
            }).toCompletableFuture();
            assertThat(priced.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            // Registered before the answer exists, so it runs where the stage completes.
            CompletableFuture<String> completedOn = stage.thenApply(o -> Thread.currentThread().getName());
            release.countDown();
            String where = completedOn.get(WAIT_SECONDS, TimeUnit.SECONDS);
            assertThat(pricedOn.get()).as("priced on").startsWith("warden-quota-charge-");
            assertThat(where).as("completed on").doesNotStartWith("warden-quota-charge-")
                    .isNotEqualTo(Thread.currentThread().getName());
            assertThat(stage.get()).isInstanceOf(Outcome.Applied.class);
        }
    }

    @Test
    @DisplayName("a callback that charges the same account again, blocking, does not wait on itself")
    void callbackChargingAgainDoesNotDeadlock() throws Exception {
        for (QuotaService quota : List.of(locked, combined)) {
            String account = newAccount(quota, 100);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Outcome> first = quota.chargeAsync(account, "first", balance -> {
                await(release);
                return 1;
            }).toCompletableFuture();
            AtomicReference<String> calledOn = new AtomicReference<>();
            // Registered while the first is still pricing, so it runs where the stage completes, not here.
            CompletableFuture<Outcome> second = first.thenApply(o -> {
                calledOn.set(Thread.currentThread().getName());
                return quota.charge(account, "second", balance -> 2);
            });
            release.countDown();
            assertThat(second.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
            assertThat(calledOn.get()).isNotEqualTo(Thread.currentThread().getName());
            assertThat(quota.balance(account)).hasValue(97);
        }
    }

    @Test
    @DisplayName("a pricing that throws an Error fails its own charge only; the account's queue goes on")
    void errorInPricing() throws Exception {
        for (QuotaService quota : List.of(unlocked, locked, combined)) {
            String account = newAccount(quota, 100);
            AssertionError broken = new AssertionError("pricing broke");
            CompletableFuture<Outcome> before = quota.chargeAsync(account, "before", balance -> 1).toCompletableFuture();
            CompletableFuture<Outcome> failing = quota.chargeAsync(account, "failing", balance -> {
                throw broken;
            }).toCompletableFuture();
            CompletableFuture<Outcome> after = quota.chargeAsync(account, "after", balance -> 2).toCompletableFuture();
            assertThat(failure(failing)).as("%s", quota).isSameAs(broken);
            assertThat(answer(before)).isInstanceOf(Outcome.Applied.class);
            assertThat(answer(after)).isInstanceOf(Outcome.Applied.class);
            CompletableFuture<Throwable> blocking = CompletableFuture.supplyAsync(() -> {
                try {
                    quota.charge(account, "blocking", balance -> {
                        throw broken;
                    });
                    return null;
                } catch (Throwable e) {
                    return e;
                }
            });
            assertThat(blocking.get(WAIT_SECONDS, TimeUnit.SECONDS)).as("thrown to the blocking caller").isSameAs(broken);
            assertThat(answer(quota.chargeAsync(account, "last", balance -> 3))).isInstanceOf(Outcome.Applied.class);
            assertThat(quota.balance(account)).hasValue(94);
        }
    }

    @Test
    @DisplayName("blocking and asynchronous charges of one account share the queue through many holds: each priced on the balance it applied to")
    void blockingAndAsyncTogether() throws Exception {
        long opening = 100_000;
        String account = newAccount(combined, opening);
        // More than one hold's worth (16 rounds of 64) queued at once: the combining passes between charge threads
        // and blocking callers.
        int asyncCharges = 2_500;
        List<CompletableFuture<Outcome>> async = new ArrayList<>();
        for (int i = 0; i < asyncCharges; i++) {
            async.add(combined.chargeAsync(account, "async-" + i, ChargeAsyncTest::price).toCompletableFuture());
        }
        List<CompletableFuture<List<Outcome>>> blocking = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            blocking.add(CompletableFuture.supplyAsync(() -> {
                List<Outcome> mine = new ArrayList<>();
                for (int i = 0; i < 50; i++) {
                    mine.add(combined.charge(account, "blocking-" + thread + "-" + i, ChargeAsyncTest::price));
                }
                return mine;
            }));
        }
        List<Outcome> all = new ArrayList<>();
        for (CompletableFuture<Outcome> f : async) {
            all.add(f.get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        for (CompletableFuture<List<Outcome>> f : blocking) {
            all.addAll(f.get(WAIT_SECONDS, TimeUnit.SECONDS));
        }
        assertThat(all).allSatisfy(o -> assertThat(o).isInstanceOf(Outcome.Applied.class));
        // Nothing else touches the account: the balances the charges left, highest first, are exactly the chain of
        // prices from the opening, each charge priced on the balance the one before it left.
        List<Long> left = all.stream().map(o -> ((Outcome.Applied) o).balance())
                .sorted(java.util.Comparator.reverseOrder()).toList();
        List<Long> chain = new ArrayList<>();
        for (long b = opening; chain.size() < all.size(); ) {
            b -= price(b);
            chain.add(b);
        }
        assertThat(left).isEqualTo(chain);
        assertThat(combined.balance(account)).hasValue(chain.get(chain.size() - 1));
    }

    private static long price(long balance) {
        return 1 + balance % 3;
    }

    @Test
    @DisplayName("a blocking caller takes over a turn still waiting for a charge thread")
    void blockingCallerTakesOverAWaitingTurn() throws Exception {
        QuotaService quota = QuotaService.create(settings("warden.quota.charge-threads", "1",
                "warden.quota.combine-charges", "true"));
        try {
            String busy = newAccount(quota, 100);
            String other = newAccount(quota, 100);
            CountDownLatch priced = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CompletableFuture<Outcome> holding = quota.chargeAsync(busy, "r", balance -> {
                priced.countDown();
                await(release);
                return 1;
            }).toCompletableFuture();
            assertThat(priced.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            // The one charge thread is busy: this turn waits for it.
            CompletableFuture<Outcome> queued = quota.chargeAsync(other, "a", balance -> 1).toCompletableFuture();
            CompletableFuture<Outcome> blocking = CompletableFuture.supplyAsync(() -> quota.charge(other, "b", balance -> 1));
            assertThat(blocking.get(WAIT_SECONDS, TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
            assertThat(answer(queued)).as("served by the caller that took the turn over").isInstanceOf(Outcome.Applied.class);
            assertThat(holding).isNotDone();
            release.countDown();
            assertThat(answer(holding)).isInstanceOf(Outcome.Applied.class);
            assertThat(quota.balance(other)).hasValue(98);
        } finally {
            quota.close();
        }
    }

    @Test
    @DisplayName("closing the engine answers the charges not yet sent with CLOSED; nothing of theirs is deducted")
    void closeAnswersTheQueued() throws Exception {
        for (boolean combine : new boolean[] {false, true}) {
            QuotaService quota = QuotaService.create(settings("warden.quota.charge-threads", "1",
                    "warden.quota.combine-charges", Boolean.toString(combine)));
            String busy = newAccount(quota, 100);
            String waiting = newAccount(quota, 100);
            CountDownLatch priced = new CountDownLatch(1);
            CountDownLatch never = new CountDownLatch(1);
            CompletableFuture<Outcome> running = quota.chargeAsync(busy, "r", balance -> {
                priced.countDown();
                await(never); // until the close interrupts the one charge thread
                return 1;
            }).toCompletableFuture();
            assertThat(priced.await(WAIT_SECONDS, TimeUnit.SECONDS)).isTrue();
            List<CompletableFuture<Outcome>> queued = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                queued.add(quota.chargeAsync(waiting, "q-" + i, balance -> 1).toCompletableFuture());
                // Behind the running one: combined, on the same line as it; alone, tasks of their own.
                queued.add(quota.chargeAsync(busy, "b-" + i, balance -> 1).toCompletableFuture());
            }
            quota.close();
            for (CompletableFuture<Outcome> q : queued) {
                assertThat(failure(q)).as("combine=%s", combine).isInstanceOfSatisfying(QuotaException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.CLOSED));
            }
            assertThat(failure(running)).as("the running charge, interrupted in its pricing")
                    .isInstanceOf(IllegalStateException.class).hasMessage("interrupted");
            assertThatThrownBy(() -> quota.chargeAsync(waiting, "late", balance -> 1))
                    .isInstanceOfSatisfying(QuotaException.class, e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.CLOSED));
            assertThat(unlocked.balance(waiting)).as("nothing of the queued deducted").hasValue(100);
            assertThat(unlocked.balance(busy)).as("the interrupted pricing deducted nothing").hasValue(100);
        }
    }

    /** Waits for {@code latch}; an interrupt fails the pricing, as a user's pricing interrupted would. */
    private static void await(CountDownLatch latch) {
        try {
            if (!latch.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("not released in " + WAIT_SECONDS + " s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
