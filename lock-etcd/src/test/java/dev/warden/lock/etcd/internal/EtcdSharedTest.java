package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The etcd driver's shared names (semaphores, read-write locks) driven through the SPI on a real etcd
 * member: grant rule, tokens, renew and release, abandon, waits, dead holders, and isolation from locks.
 */
@DisplayName("etcd backend: shared names through the driver")
class EtcdSharedTest {

    /** etcd's minimum lease TTL with default timing. */
    private static final Duration TTL = Duration.ofSeconds(2);
    /** How long anything that should happen may take. */
    private static final Duration SOON = Duration.ofSeconds(10);
    /** How long something that must not happen is watched for not happening. */
    private static final Duration QUIET = Duration.ofMillis(700);
    private static final Share PERMIT_OF_3 = new Share(1, 3);

    private static EtcdServer server;

    private final String namespace = "shared-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<EtcdDriver> drivers = new ArrayList<>();

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeDrivers() {
        drivers.forEach(EtcdDriver::close);
    }

    private EtcdDriver driver() {
        return driver(TTL);
    }

    /**
     * A driver whose sessions live {@code ttl}: a TTL longer than {@link #SOON} shows that a wait ended
     * by a watch event, not by the fallback poll once per TTL.
     */
    private EtcdDriver driver(Duration ttl) {
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        EtcdDriver d = EtcdDriver.open(new LockConfig("etcd", List.of(server.endpoints()), namespace, ttl,
                Duration.ofSeconds(20), Duration.ofSeconds(2), Map.of()));
        drivers.add(d);
        return d;
    }

    private long entries(String name) {
        return server.count(Keys.sharedPrefix(namespace, name));
    }

    @Test
    @DisplayName("three permits: three weight-1 entries are granted, the fourth waits and is granted after a release")
    void permits() throws Exception {
        EtcdDriver d = driver();
        List<Grant> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(new Contender(d, "jobs", "o" + i, PERMIT_OF_3).grant());
        }
        Contender fourth = new Contender(d, "jobs", "o4", PERMIT_OF_3);
        fourth.awaitWaiting();
        Await.during(QUIET, "the fourth permit waits", () -> !fourth.granted.isDone());
        assertThat(await(d.release(held.get(1)))).isTrue();
        Grant g = fourth.grant();
        assertThat(g.fencingToken()).isGreaterThan(held.get(2).fencingToken());
        assertThat(entries("jobs")).isEqualTo(3);
    }

    @Test
    @DisplayName("no barging: a weight-3 entry waiting behind holders holds back a later weight-1 entry that would fit")
    void noBarging() throws Exception {
        EtcdDriver d = driver();
        Grant a = new Contender(d, "pool", "a", PERMIT_OF_3).grant();
        Grant b = new Contender(d, "pool", "b", PERMIT_OF_3).grant();
        Contender big = new Contender(d, "pool", "big", new Share(3, 3));
        big.awaitWaiting();
        Contender small = new Contender(d, "pool", "small", PERMIT_OF_3);
        small.awaitWaiting();
        Await.during(QUIET, "both wait", () -> !big.granted.isDone() && !small.granted.isDone());
        await(d.release(a));
        Await.during(QUIET, "one permit back is not enough for either", () -> !big.granted.isDone() && !small.granted.isDone());
        await(d.release(b));
        Grant bigGrant = big.grant();
        Await.during(QUIET, "the small one waits behind the big one's three permits", () -> !small.granted.isDone());
        await(d.release(bigGrant));
        assertThat(small.grant().fencingToken()).isGreaterThan(bigGrant.fencingToken());
    }

    @Test
    @DisplayName("read-write: readers together, a writer alone, a reader after a waiting writer waits; tokens in arrival order")
    void readersAndWriters() throws Exception {
        EtcdDriver d = driver();
        EtcdDriver other = driver();
        Grant r1 = new Contender(d, "rw:accounts", "r1", Share.READ).grant();
        Grant r2 = new Contender(other, "rw:accounts", "r2", Share.READ).grant();
        Contender w = new Contender(d, "rw:accounts", "w", Share.WRITE);
        w.awaitWaiting();
        Contender r3 = new Contender(other, "rw:accounts", "r3", Share.READ);
        r3.awaitWaiting();
        await(d.release(r1));
        Await.during(QUIET, "the writer waits for the second reader, the late reader for the writer",
                () -> !w.granted.isDone() && !r3.granted.isDone());
        await(other.release(r2));
        Grant wg = w.grant();
        Await.during(QUIET, "the late reader waits while the writer holds", () -> !r3.granted.isDone());
        await(d.release(wg));
        Grant r3g = r3.grant();
        assertThat(wg.fencingToken()).isGreaterThan(r1.fencingToken()).isGreaterThan(r2.fencingToken());
        assertThat(r3g.fencingToken()).isGreaterThan(wg.fencingToken());
        assertThat(r1.fencingToken()).isNotEqualTo(r2.fencingToken());
    }

    @Test
    @DisplayName("renew and release compare owner and token: a stale grant neither renews nor releases the newer one on its key")
    void renewAndReleaseCompare() throws Exception {
        EtcdDriver d = driver();
        SharedGrant first = (SharedGrant) new Contender(d, "cmp", "o1", PERMIT_OF_3).grant();
        assertThat(await(d.renew(first, TTL))).isTrue();
        assertThat(await(d.release(first))).isTrue();
        SharedGrant second = (SharedGrant) new Contender(d, "cmp", "o2", PERMIT_OF_3).grant();
        // The slot's key is reused: a client leaves no deleted key behind per acquisition.
        assertThat(second.key()).isEqualTo(first.key());
        assertThat(await(d.renew(first, TTL))).isFalse();
        assertThat(await(d.release(first))).isFalse();
        // Another owner's grant with the same key and token (value differs) touches nothing either.
        SharedGrant forged = new SharedGrant(second.key(), second.createRevision(), ByteString.copyFromUtf8("1 intruder x"),
                second.session(), second.leaseConfirmedSentAt(), null);
        assertThat(await(d.renew(forged, TTL))).isFalse();
        assertThat(await(d.release(forged))).isFalse();
        assertThat(await(d.renew(second, TTL))).isTrue();
        assertThat(entries("cmp")).isEqualTo(1);
        assertThat(await(d.release(second))).isTrue();
        assertThat(entries("cmp")).isZero();
    }

    @Test
    @DisplayName("an abandoned attempt leaves nothing and wakes the one behind it")
    void abandonWakesTheNext() throws Exception {
        EtcdDriver d = driver(Duration.ofSeconds(30));
        Share ofTwo = new Share(1, 2);
        Grant holder = new Contender(d, "two", "h", ofTwo).grant();
        Contender both = new Contender(d, "two", "both", new Share(2, 2));
        both.awaitWaiting();
        Contender next = new Contender(d, "two", "next", ofTwo);
        next.awaitWaiting();
        Await.during(QUIET, "the one behind waits behind the two-permit request", () -> !next.granted.isDone());
        String abandonedKey = both.key();
        await(both.abandon());
        next.grant();
        assertThat(server.keys(Keys.sharedPrefix(namespace, "two"))).hasSize(2).doesNotContain(abandonedKey);
        await(d.release(holder));
    }

    @Test
    @DisplayName("changed() completes after a release of the entry ahead, and not before")
    void changedAfterRelease() throws Exception {
        EtcdDriver d = driver(Duration.ofSeconds(30));
        Grant holder = new Contender(d, "ch", "h", Share.WRITE).grant();
        LockAttempt waiter = d.attemptShared("ch", "w", Share.WRITE);
        assertThat(await(waiter.poll(TTL))).isEmpty();
        CompletableFuture<Void> changed = waiter.changed().toCompletableFuture();
        Await.during(QUIET, "no change while the holder holds", () -> !changed.isDone());
        await(d.release(holder));
        Await.until(SOON, "changed() completes after the release", changed::isDone);
        assertThat(await(waiter.poll(TTL))).isPresent();
    }

    @Test
    @DisplayName("a dead holder's entry (its session no longer kept alive) stops counting within the TTL")
    void deadHolderStopsCounting() throws Exception {
        EtcdDriver dying = driver();
        EtcdDriver d = driver();
        new Contender(dying, "dead", "h", Share.WRITE).grant();
        Contender waiter = new Contender(d, "dead", "w", Share.WRITE);
        waiter.awaitWaiting();
        // As a crashed client: no more keep-alives, no revoke; the server ends the lease at its TTL.
        await(dying.session()).close();
        Await.until(SOON, "the waiter is granted once the dead holder's lease expired", waiter.granted::isDone);
        assertThat(waiter.grant()).isNotNull();
        assertThat(entries("dead")).isEqualTo(1);
    }

    @Test
    @DisplayName("closing the driver fails a pending changed() with CLOSED")
    void closeFailsTheWait() throws Exception {
        EtcdDriver d = driver();
        EtcdDriver closing = driver();
        new Contender(d, "closing", "h", Share.WRITE).grant();
        LockAttempt waiter = closing.attemptShared("closing", "w", Share.WRITE);
        assertThat(await(waiter.poll(TTL))).isEmpty();
        CompletableFuture<Void> changed = waiter.changed().toCompletableFuture();
        closing.close();
        assertThatThrownBy(() -> changed.get(SOON.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
    }

    @Test
    @DisplayName("a lock and a shared name of the same name do not see each other; listings and holder reads skip shared entries")
    void apartFromLocks() throws Exception {
        EtcdDriver d = driver();
        Grant sharedWriter = new Contender(d, "same", "s", Share.WRITE).grant();
        LockAttempt mutex = d.attempt("same", "m");
        Grant lock = await(mutex.poll(TTL)).orElseThrow(() -> new AssertionError("the lock waits behind a shared writer"));
        Grant secondWriter;
        LockAttempt another = d.attemptShared("same", "s2", Share.WRITE);
        assertThat(await(another.poll(TTL))).as("a second writer waits for the first, not for the lock").isEmpty();
        await(another.abandon());

        List<NamedHolder> listed = await(d.holders(SOON));
        assertThat(listed).extracting(NamedHolder::name).containsExactly("same");
        assertThat(listed.get(0).holder().token()).isEqualTo(lock.fencingToken());
        assertThat(await(d.holder("same")).orElseThrow().token()).isEqualTo(lock.fencingToken());
        await(d.release(lock));
        assertThat(await(d.holders(SOON))).isEmpty();
        assertThat(await(d.holder("same"))).isEmpty();

        await(d.release(sharedWriter));
        secondWriter = new Contender(d, "same", "s3", Share.WRITE).grant();
        assertThat(secondWriter.fencingToken()).isGreaterThan(sharedWriter.fencingToken());
        await(d.release(secondWriter));
        assertThat(entries("same")).isZero();
    }

    @Test
    @DisplayName("a queue longer than a page: reads go on page by page, stop at the first entry that does not fit, and wake on the one deletion that lets in")
    void longQueue() throws Exception {
        EtcdDriver d = driver();
        String prefix = Keys.sharedPrefix(namespace, "long");
        int ahead = SharedQueue.PAGE + 100;
        for (int i = 0; i < ahead; i++) {
            server.put(prefix + String.format("other-%04d", i), "1 someone attempt-" + i);
        }
        Contender fits = new Contender(d, "long", "fits", new Share(1, ahead + 1));
        Grant g = fits.grant();
        await(d.release(g));
        Contender waits = new Contender(d, "long", "waits", new Share(1, ahead));
        waits.awaitWaiting();
        Await.during(QUIET, "one entry too many ahead", () -> !waits.granted.isDone());
        assertThat(server.delete(prefix + String.format("other-%04d", ahead - 1))).isTrue();
        waits.grant();
        server.deletePrefix(prefix);
    }

    @Test
    @DisplayName("one client's waiters share one watch of the name; a release wakes only the waiter it lets in, granted"
            + " without a read; the watch ends with the last wait")
    void oneWatchPerName() throws Exception {
        assertThat(server.isManaged()).as("this test counts the server's calls: unset WARDEN_ETCD_ENDPOINTS").isTrue();
        // A TTL long enough that neither the keep-alive nor the fallback poll runs meanwhile.
        EtcdDriver d = driver(Duration.ofSeconds(60));
        Await.until(SOON, "no watch left by earlier tests", () -> gauge("etcd_debugging_mvcc_watcher_total") == 0);
        Share one = new Share(1, 1);
        Grant held = new Contender(d, "herd", "h", one).grant();
        Map<String, Long> before = calls();
        List<Contender> waiters = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            Contender w = new Contender(d, "herd", "w" + i, one);
            w.awaitWaiting();
            waiters.add(w);
        }
        Await.until(SOON, "the first wait's watch reaches the server", () -> since(before).containsKey("Watch"));
        Await.during(QUIET, "no more watches", () -> since(before).getOrDefault("Watch", 0L) == 1);
        // The five creations; perhaps one read as the watch starts behind later writes.
        assertThat(since(before)).containsEntry("Txn", 5L).containsEntry("Watch", 1L);
        for (int i = 0; i < waiters.size(); i++) {
            Map<String, Long> waiting = calls();
            assertThat(await(d.release(held))).isTrue();
            held = waiters.get(i).grant();
            int next = i + 1;
            Await.during(QUIET, "the later waiters still wait",
                    () -> waiters.stream().skip(next).noneMatch(w -> w.granted.isDone()));
            assertThat(since(waiting)).as("calls for a release and the grant it let in").isEqualTo(Map.of("Txn", 1L));
        }
        await(d.release(held));
        Await.until(SOON, "the name's watch ended with its last wait", () -> gauge("etcd_debugging_mvcc_watcher_total") == 0);
        assertThat(entries("herd")).isZero();
    }

    @Test
    @DisplayName("a wait that joins the name's watch after it passed a deletion the wait needs is told of it")
    void joinsAfterTheDeletion() throws Exception {
        assertThat(server.isManaged()).as("this test counts the server's calls: unset WARDEN_ETCD_ENDPOINTS").isTrue();
        EtcdDriver d = driver(Duration.ofSeconds(60));
        Share ofThree = new Share(1, 3);
        Grant h1 = new Contender(d, "late", "h1", ofThree).grant();
        new Contender(d, "late", "h2", ofThree).grant();
        // Needs all ahead gone: it keeps the name's watch going throughout.
        Contender first = new Contender(d, "late", "first", new Share(1, 1));
        first.awaitWaiting();
        LockAttempt late = d.attemptShared("late", "late", ofThree);
        assertThat(await(late.poll(TTL))).as("h1, h2 and the first ahead").isEmpty();
        await(d.release(h1));
        // Time for the deletion to reach the watch before the late attempt waits.
        Thread.sleep(QUIET.toMillis());
        CompletableFuture<Void> changed = late.changed().toCompletableFuture();
        Await.until(SOON, "the late wait completes on the deletion it missed", changed::isDone);
        Map<String, Long> before = calls();
        assertThat(await(late.poll(TTL))).as("h2 and the first ahead fit a permit of three").isPresent();
        assertThat(since(before)).as("a grant the wait proved reads nothing").isEmpty();
        assertThat(first.granted).isNotDone();
    }

    @Test
    @DisplayName("a wait whose read is older than the name's watch reads once which entries ahead went")
    void readBeforeTheWatch() throws Exception {
        EtcdDriver d = driver(Duration.ofSeconds(60));
        Share ofThree = new Share(1, 3);
        Grant h1 = new Contender(d, "older", "h1", ofThree).grant();
        new Contender(d, "older", "h2", ofThree).grant();
        LockAttempt early = d.attemptShared("older", "early", new Share(1, 2));
        assertThat(await(early.poll(TTL))).as("h1 and h2 ahead").isEmpty();
        // Behind the early attempt, it starts the name's watch from a later revision.
        Contender later = new Contender(d, "older", "later", new Share(1, 1));
        later.awaitWaiting();
        await(d.release(h1));
        Thread.sleep(QUIET.toMillis());
        CompletableFuture<Void> changed = early.changed().toCompletableFuture();
        Await.until(SOON, "the early wait completes once a read shows h1 gone", changed::isDone);
        assertThat(await(early.poll(TTL))).isPresent();
        assertThat(later.granted).isNotDone();
    }

    @Test
    @DisplayName("a waiting entry deleted by hand is never granted: its wait tells, and its poll fails")
    void deletedByHandNeverGranted() throws Exception {
        EtcdDriver d = driver(Duration.ofSeconds(60));
        Share alone = new Share(1, 1);
        Grant held = new Contender(d, "hand", "h", alone).grant();
        LockAttempt gone = d.attemptShared("hand", "gone", alone);
        assertThat(await(gone.poll(TTL))).isEmpty();
        // Behind it, it starts the name's watch after the first one's read.
        Contender behind = new Contender(d, "hand", "behind", alone);
        behind.awaitWaiting();
        assertThat(server.delete(((SharedAttempt) gone).key())).isTrue();
        await(d.release(held));
        assertThat(behind.grant()).as("nothing ahead of it any more").isNotNull();
        CompletableFuture<Void> changed = gone.changed().toCompletableFuture();
        Await.until(SOON, "the wait tells that its entry went", changed::isDone);
        assertThatThrownBy(() -> await(gone.poll(TTL))).isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE));
    }

    @Test
    @DisplayName("round trips: a granting poll is one transaction, a renewal a keep-alive and a read, a release one transaction")
    void roundTrips() throws Exception {
        assertThat(server.isManaged()).as("this test counts the server's calls, so it needs an etcd of its own:"
                + " unset WARDEN_ETCD_ENDPOINTS to let testkit start one").isTrue();
        // A TTL long enough that the session's own keep-alive (every TTL/3) does not run meanwhile.
        EtcdDriver d = driver(Duration.ofSeconds(60));
        await(d.release(await(d.attemptShared("counted", "warm-up", Share.READ).poll(TTL)).orElseThrow()));
        Map<String, Long> before = calls();
        int rounds = 10;
        for (int i = 0; i < rounds; i++) {
            Grant g = await(d.attemptShared("counted", "o" + i, Share.READ).poll(TTL)).orElseThrow();
            assertThat(await(d.renew(g, TTL))).isTrue();
            assertThat(await(d.release(g))).isTrue();
        }
        assertThat(since(before)).as("calls the server received for %d poll+renew+release", rounds)
                .isEqualTo(Map.of("Txn", 2L * rounds, "Range", (long) rounds, "LeaseKeepAlive", (long) rounds));
    }

    /** The calls the server received since {@code before}, by method. */
    private static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> made = new TreeMap<>();
        calls().forEach((method, n) -> {
            long diff = n - before.getOrDefault(method, 0L);
            if (diff > 0) {
                made.put(method, diff);
            }
        });
        return made;
    }

    /** One of etcd's gauges. */
    private static long gauge(String name) {
        for (String line : metrics().split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("etcd has no metric " + name);
    }

    private static String metrics() {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create(server.clientUrls().get(0) + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** etcd's count of calls started, by method (as EtcdQueueTest reads it). */
    private static Map<String, Long> calls() {
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : metrics().split("\n")) {
            if (line.startsWith("grpc_server_started_total{")) {
                int at = line.indexOf("grpc_method=\"") + "grpc_method=\"".length();
                String method = line.substring(at, line.indexOf('"', at));
                calls.merge(method, (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Long::sum);
            }
        }
        return calls;
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(SOON.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** lock-api's acquire loop in small: poll, wait for changed(), poll again, until granted or abandoned. */
    private static final class Contender {
        private final LockAttempt attempt;
        private final CompletableFuture<Grant> granted = new CompletableFuture<>();
        /** Guarded by {@code this}. */
        private boolean waiting;
        /** Guarded by {@code this}. */
        private boolean abandoned;
        /** The poll under way, which an abandon waits for; guarded by {@code this}. */
        private CompletableFuture<?> polling = CompletableFuture.completedFuture(null);

        Contender(EtcdDriver driver, String name, String owner, Share share) {
            attempt = driver.attemptShared(name, owner, share);
            poll();
        }

        private void poll() {
            CompletableFuture<Optional<Grant>> p;
            synchronized (this) {
                if (abandoned) {
                    return;
                }
                waiting = false;
                p = attempt.poll(TTL).toCompletableFuture();
                polling = p;
            }
            p.whenComplete((g, error) -> {
                if (error != null) {
                    granted.completeExceptionally(error);
                } else if (g.isPresent()) {
                    granted.complete(g.get());
                } else {
                    synchronized (this) {
                        waiting = true;
                    }
                    attempt.changed().whenComplete((v, e) -> {
                        if (e != null) {
                            granted.completeExceptionally(e);
                        } else {
                            poll();
                        }
                    });
                }
            });
        }

        Grant grant() throws Exception {
            return granted.get(SOON.toMillis(), TimeUnit.MILLISECONDS);
        }

        void awaitWaiting() {
            Await.until(SOON, "the attempt waits", () -> {
                synchronized (this) {
                    return waiting || granted.isDone();
                }
            });
            assertThat(granted).as("not granted").isNotDone();
        }

        String key() {
            return ((SharedAttempt) attempt).key();
        }

        CompletableFuture<Void> abandon() {
            CompletableFuture<?> p;
            synchronized (this) {
                abandoned = true;
                p = polling;
            }
            return p.handle((r, e) -> null).thenCompose(v -> attempt.abandon().toCompletableFuture());
        }
    }
}
