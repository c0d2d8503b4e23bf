package dev.warden.quota;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@code warden.quota.combine-charges}: an account's concurrent charges share one hold of its lock and are priced
 * in rounds, each deduction applied only to the exact balance it was priced on; against a real redis-server.
 */
@DisplayName("charges combined (warden.quota.combine-charges)")
class CombinedChargeTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static final KeyLayout LAYOUT = new KeyLayout(16);
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    /** Rounds a charge whose balance moved is priced in before it is charged alone (CombinedRound.PRICED_AGAIN). */
    private static final int CHARGED_ALONE_AFTER = 3;

    private static QuotaService locked;
    private static QuotaService unlocked;
    private static QuotaService plain;
    private static ExecutorService threads;

    @BeforeAll
    static void open() {
        locked = QuotaService.create(settings("warden.quota.lock", "redis", "warden.lock.namespace", "combined",
                "warden.lock.ttl", "10s"));
        unlocked = QuotaService.create(settings());
        plain = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri())));
        threads = Executors.newFixedThreadPool(16);
    }

    @AfterAll
    static void close() {
        threads.shutdownNow();
        locked.close();
        unlocked.close();
        plain.close();
    }

    private static Map<String, String> settings(String... more) {
        Map<String, String> s = ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.combine-charges", "true"));
        for (int i = 0; i + 1 < more.length; i += 2) {
            s.put(more[i], more[i + 1]);
        }
        return s;
    }

    private static List<Journal.Entry> entriesOf(String account) {
        return Journal.read(redis.server(), LAYOUT.journalOf(account)).stream()
                .filter(e -> e.account().equals(account)).toList();
    }

    private static String newAccount(QuotaService quota, long balance) {
        String account = "m-" + UUID.randomUUID();
        assertThat(quota.open(account, balance)).isInstanceOf(Outcome.Applied.class);
        return account;
    }

    /** A price that depends on the balance, so a deduction priced on any other balance shows in the journal. */
    private static long price(long balance) {
        return 1 + balance % 5;
    }

    @Test
    @DisplayName("16 threads charging one account, another deducting beside them: every charge priced on the balance it applied to")
    void everyChargePricedOnItsBalance() throws Exception {
        for (QuotaService quota : List.of(locked, unlocked)) {
            String account = newAccount(quota, 1_000_000);
            Map<String, Outcome> answers = new ConcurrentHashMap<>();
            Map<String, List<Long>> pricedOn = new ConcurrentHashMap<>();
            List<Future<?>> running = new ArrayList<>();
            for (int t = 0; t < 15; t++) {
                int thread = t;
                running.add(threads.submit(() -> {
                    for (int i = 0; i < 40; i++) {
                        String rid = "c-" + thread + "-" + i;
                        answers.put(rid, quota.charge(account, rid, balance -> {
                            pricedOn.computeIfAbsent(rid, r -> new CopyOnWriteArrayList<>()).add(balance);
                            return price(balance);
                        }));
                    }
                }));
            }
            // Deductions outside the lock move the balance under the rounds: those charges are priced again.
            running.add(threads.submit(() -> {
                for (int i = 0; i < 100; i++) {
                    assertThat(plain.deduct(account, 1, "d-" + i)).isInstanceOf(Outcome.Applied.class);
                }
            }));
            for (Future<?> f : running) {
                f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            }

            List<Journal.Entry> entries = entriesOf(account);
            long balance = entries.get(0).balance(); // the opening
            Map<String, Journal.Entry> byRequest = new HashMap<>();
            for (Journal.Entry e : entries.subList(1, entries.size())) {
                assertThat(e.kind()).isEqualTo("deduct");
                if (e.request().startsWith("c-")) {
                    List<Long> priced = pricedOn.get(e.request());
                    if (priced.size() <= CHARGED_ALONE_AFTER) {
                        // Combined: applied only to the balance it was last priced on.
                        assertThat(priced.get(priced.size() - 1)).as("charge %s applied to the balance it was priced on",
                                e.request()).isEqualTo(balance);
                        assertThat(e.amount()).isEqualTo(price(balance));
                    } else {
                        // Moved in three rounds, then charged alone as without combining: priced on a balance read.
                        assertThat(priced).hasSize(CHARGED_ALONE_AFTER + 1);
                        assertThat(e.amount()).isEqualTo(price(priced.get(CHARGED_ALONE_AFTER)));
                    }
                }
                assertThat(e.balance()).isEqualTo(balance - e.amount());
                balance = e.balance();
                assertThat(byRequest.put(e.request(), e)).as("one entry per request").isNull();
            }
            assertThat(byRequest).hasSize(15 * 40 + 100);
            assertThat(quota.balance(account)).hasValue(balance);
            answers.forEach((rid, outcome) -> {
                Journal.Entry e = byRequest.get(rid);
                assertThat(outcome).as(rid).isEqualTo(new Outcome.Applied(e.balance(), e.id()));
            });
        }
    }

    @Test
    @DisplayName("charges queued while one is priced are served in the next round, under the same hold and token")
    void queuedChargesShareAHold() throws Exception {
        String account = newAccount(locked, 10_000);
        Set<Thread> waiting = ConcurrentHashMap.newKeySet();
        List<Future<Outcome>> others = new ArrayList<>();
        // Priced while seven other callers are queued behind this one (each waiting for its answer).
        Future<Outcome> first = pricedWhileQueued(account, waiting, 7, 10);
        for (int i = 0; i < 7; i++) {
            String rid = "queued-" + i;
            others.add(queued(waiting, () -> locked.charge(account, rid, balance -> 1)));
        }
        assertThat(first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(new Outcome.Applied(9_990,
                entriesOf(account).get(1).id()));
        for (Future<Outcome> f : others) {
            assertThat(f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        }
        List<Journal.Entry> charged = entriesOf(account).subList(1, 9);
        assertThat(charged.stream().map(Journal.Entry::token).collect(Collectors.toSet()))
                .as("one hold of the account's lock for all eight").hasSize(1).doesNotContain("-");
        assertThat(locked.balance(account)).hasValue(9_983);
    }

    @Test
    @DisplayName("one request id charged by eight callers at once: applied once, the others answered as it was")
    void oneRequestIdAtOnce() throws Exception {
        String account = newAccount(locked, 1_000);
        AtomicInteger priced = new AtomicInteger();
        List<Future<Outcome>> calls = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            calls.add(threads.submit(() -> locked.charge(account, "same", balance -> {
                priced.incrementAndGet();
                return 25;
            })));
        }
        List<Outcome> outcomes = new ArrayList<>();
        for (Future<Outcome> f : calls) {
            outcomes.add(f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS));
        }
        List<Journal.Entry> entries = entriesOf(account);
        assertThat(entries).hasSize(2);
        Outcome.Applied applied = new Outcome.Applied(975, entries.get(1).id());
        assertThat(outcomes).containsOnly(applied, new Outcome.Duplicate(applied));
        assertThat(outcomes).filteredOn(o -> o instanceof Outcome.Applied).hasSize(1);
        // A round after the first prices without reading the records; the script answers the retry with its record.
        assertThat(priced.get()).as("priced at least once, its later prices unused").isBetween(1, 8);
        assertThat(locked.balance(account)).hasValue(975);
    }

    @Test
    @DisplayName("a round priced without reading: a retry answers its first outcome even when its pricing now throws;"
            + " a price refused there is priced again after a read")
    void roundPricedWithoutReading() throws Exception {
        String account = newAccount(locked, 10_000);
        Outcome.Applied earlier = (Outcome.Applied) locked.charge(account, "earlier", balance -> 5);
        Outcome.Applied earlierB = (Outcome.Applied) locked.charge(account, "earlier-b", balance -> 5);
        Set<Thread> waiting = ConcurrentHashMap.newKeySet();
        AtomicInteger retryPriced = new AtomicInteger();
        AtomicInteger zeroPriced = new AtomicInteger();
        // Round 1 reads; its reply tells the balance, so round 2 (the four queued now) prices without reading.
        Future<Outcome> first = pricedWhileQueued(account, waiting, 4, 10);
        Future<Outcome> retry = queued(waiting, () -> locked.charge(account, "earlier", balance -> {
            retryPriced.incrementAndGet();
            throw new IllegalStateException("no price for a retry");
        }));
        Future<Outcome> zero = queued(waiting, () -> locked.charge(account, "zero", balance -> {
            zeroPriced.incrementAndGet();
            return 0;
        }));
        Future<Outcome> plain = queued(waiting, () -> locked.charge(account, "plain", balance -> 1));
        // Priced otherwise than the first time: its record answers, not a conflict of amounts.
        Future<Outcome> repriced = queued(waiting, () -> locked.charge(account, "earlier-b", balance -> 7));

        assertThat(first.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        assertThat(retry.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(new Outcome.Duplicate(earlier));
        assertThat(retryPriced).as("priced in the round that did not read, then answered by its record").hasValue(1);
        assertThat(zero.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.InvalidAmount.class);
        assertThat(zeroPriced).as("refused unread, priced again after its record was read").hasValue(2);
        assertThat(plain.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        assertThat(repriced.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(new Outcome.Duplicate(earlierB));
        assertThat(locked.balance(account)).hasValue(10_000 - 5 - 5 - 10 - 1);
        assertThat(entriesOf(account)).hasSize(5);
    }

    /**
     * Charge "first" of {@code account}, its pricing (returning {@code price}) held until {@code n} callers counted in
     * {@code waiting} are parked; returns once it is being priced.
     */
    private Future<Outcome> pricedWhileQueued(String account, Set<Thread> waiting, int n, long price)
            throws InterruptedException {
        CountDownLatch pricing = new CountDownLatch(1);
        Future<Outcome> first = threads.submit(() -> locked.charge(account, "first", balance -> {
            pricing.countDown();
            Await.until(DEADLINE, n + " charges queued", () -> waiting.size() == n
                    && waiting.stream().allMatch(t -> t.getState() == Thread.State.WAITING));
            return price;
        }));
        assertThat(pricing.await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).as("the first charge is priced").isTrue();
        return first;
    }

    /** A charge on a pool thread that is first counted in {@code waiting}. */
    private Future<Outcome> queued(Set<Thread> waiting, Callable<Outcome> charge) {
        return threads.submit(() -> {
            waiting.add(Thread.currentThread());
            return charge.call();
        });
    }

    @Test
    @DisplayName("a balance moved between the read and the deduction: nothing applied on it, priced again on the new one")
    void movedBalancePricedAgain() {
        String account = newAccount(locked, 1_000);
        List<Long> pricedOn = new CopyOnWriteArrayList<>();
        Outcome outcome = locked.charge(account, "moved-once", balance -> {
            pricedOn.add(balance);
            if (pricedOn.size() == 1) {
                assertThat(plain.deduct(account, 7, "outside")).isInstanceOf(Outcome.Applied.class);
            }
            return price(balance);
        });
        assertThat(pricedOn).containsExactly(1_000L, 993L);
        List<Journal.Entry> entries = entriesOf(account);
        assertThat(entries).extracting(Journal.Entry::request).containsExactly("", "outside", "moved-once");
        assertThat(entries.get(2).amount()).isEqualTo(price(993));
        assertThat(outcome).isEqualTo(new Outcome.Applied(993 - price(993), entries.get(2).id()));
    }

    @Test
    @DisplayName("a balance that keeps moving: after three rounds the charge is priced and deducted alone")
    void keepsMovingChargedAlone() {
        String account = newAccount(locked, 1_000);
        List<Long> pricedOn = new CopyOnWriteArrayList<>();
        Outcome outcome = locked.charge(account, "moving", balance -> {
            pricedOn.add(balance);
            assertThat(plain.deduct(account, 1, "outside-" + pricedOn.size())).isInstanceOf(Outcome.Applied.class);
            return 10;
        });
        assertThat(pricedOn).containsExactly(1_000L, 999L, 998L, 997L);
        // Alone, as without combining: priced on the balance read, deducted from whatever it is then.
        assertThat(outcome).isEqualTo(new Outcome.Applied(986, entriesOf(account).get(5).id()));
        assertThat(entriesOf(account)).extracting(Journal.Entry::request)
                .containsExactly("", "outside-1", "outside-2", "outside-3", "outside-4", "moving");
    }

    @Test
    @DisplayName("a pricing that throws fails its own caller only; a price that is no amount is InvalidAmount")
    void badPricingFailsItsCallerOnly() throws Exception {
        String account = newAccount(unlocked, 1_000);
        Future<Outcome> thrown = threads.submit(() -> unlocked.charge(account, "throws", balance -> {
            throw new IllegalStateException("no price list");
        }));
        Future<Outcome> negative = threads.submit(() -> unlocked.charge(account, "negative", balance -> -5));
        Future<Outcome> good = threads.submit(() -> unlocked.charge(account, "good", balance -> 5));
        assertThatThrownBy(() -> thrown.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).cause()
                .isInstanceOf(IllegalStateException.class).hasMessage("no price list");
        assertThat(negative.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.InvalidAmount.class);
        assertThat(good.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        assertThat(unlocked.balance(account)).hasValue(995);
        assertThat(unlocked.charge(account, "throws", balance -> 3)).as("nothing was recorded for the throwing one")
                .isInstanceOf(Outcome.Applied.class);
    }

    @Test
    @DisplayName("the account's lock held elsewhere past lock-wait: every queued charge is LOCK_TIMEOUT, nothing deducted")
    void lockTimeoutFailsTheQueue() throws Exception {
        String account = newAccount(locked, 1_000);
        try (dev.warden.lock.LockClient other = dev.warden.lock.LockClient.create(ConnectTimeouts.with(Map.of(
                     "warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                     "warden.lock.namespace", "combined")));
             QuotaService impatient = QuotaService.create(settings("warden.quota.lock", "redis",
                     "warden.lock.namespace", "combined", "warden.quota.lock-wait", "300ms"));
             dev.warden.lock.Lease held = other.lock(locked.lockName(account)).acquire()) {
            List<Future<Outcome>> calls = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String rid = "timeout-" + i;
                calls.add(threads.submit(() -> impatient.charge(account, rid, balance -> 1)));
            }
            for (Future<Outcome> f : calls) {
                assertThatThrownBy(() -> f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).cause()
                        .isInstanceOf(QuotaException.class).extracting(e -> ((QuotaException) e).reason())
                        .isEqualTo(QuotaException.Reason.LOCK_TIMEOUT);
            }
            assertThat(held.isValid()).isTrue();
        }
        assertThat(locked.balance(account)).hasValue(1_000);
        assertThat(entriesOf(account)).hasSize(1);
        assertThat(locked.charge(account, "timeout-0", balance -> 1)).as("the lock free again").isEqualTo(
                new Outcome.Applied(999, entriesOf(account).get(1).id()));
    }

    @Test
    @DisplayName("an unopened account is AccountNotFound; a split account's charges are each charged alone")
    void unopenedAndSplit() throws Exception {
        String account = newAccount(locked, 8_000);
        assertThat(locked.charge(FencedChargeTest.unopenedInPartitionOf(account), "r", balance -> 1))
                .isInstanceOf(Outcome.AccountNotFound.class);
        assertThat(locked.split(account, 4)).isEqualTo(new SplitOutcome.Split(4));
        List<Future<Outcome>> calls = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            String rid = "split-" + i;
            calls.add(threads.submit(() -> locked.charge(account, rid, balance -> 10)));
        }
        for (Future<Outcome> f : calls) {
            assertThat(f.get(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isInstanceOf(Outcome.Applied.class);
        }
        assertThat(locked.balance(account)).hasValue(8_000 - 160);
        assertThat(locked.charge(account, "split-3", balance -> 10)).isInstanceOf(Outcome.Duplicate.class);
    }
}
