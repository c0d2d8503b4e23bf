package dev.warden.lock.zookeeper;

import dev.warden.lock.FencingEpoch;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.zookeeper.internal.Paths;
import dev.warden.lock.zookeeper.internal.ZooKeeperDriver;
import dev.warden.testkit.TcpProxy;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The driver's shared names (semaphores, read-write locks) through the SPI, against one real server
 * whose container reaper runs every 20 ms, so emptied queue parents are deleted while the tests run.
 */
@DisplayName("ZooKeeper shared names")
class ZooKeeperSharedTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().containerCheckInterval(Duration.ofMillis(20)));

    private static final Duration TTL = Duration.ofSeconds(10);
    private static final Duration WITHIN = Duration.ofSeconds(15);
    private static final Share PERMIT = new Share(1, 3);

    private static ZooKeeperInspector inspector;

    private final String namespace = "shared-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(server().connectString());
        inspector = new ZooKeeperInspector(server().connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private static ZooKeeperServer server() {
        return zookeeper.server();
    }

    @Test
    @DisplayName("3 permits: three weight-1 entries are granted, the fourth waits, wakes on a release and is granted")
    void permits() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        List<Grant> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(granted(driver.attemptShared("semaphore:jobs", "p" + i, PERMIT)));
        }
        LockAttempt fourth = driver.attemptShared("semaphore:jobs", "p3", PERMIT);
        assertThat(poll(fourth)).as("a fourth permit").isEmpty();
        CompletableFuture<Void> changed = fourth.changed().toCompletableFuture();
        Await.during(Duration.ofMillis(300), "no change while the three hold", () -> !changed.isDone());

        assertThat(get(driver.release(held.get(1)))).isTrue();
        changed.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
        Grant fourthGrant = poll(fourth).orElseThrow();
        assertThat(fourthGrant.fencingToken()).isGreaterThan(held.get(2).fencingToken());
        assertThat(entries("semaphore:jobs")).hasSize(3);
        for (Grant g : List.of(held.get(0), held.get(2), fourthGrant)) {
            assertThat(get(driver.release(g))).isTrue();
        }
    }

    @Test
    @DisplayName("no barging: a weight-3 entry waiting behind holders holds back a later weight-1 entry that would fit")
    void noBarging() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        Grant a = granted(driver.attemptShared("semaphore:big", "a", PERMIT));
        Grant b = granted(driver.attemptShared("semaphore:big", "b", PERMIT));
        LockAttempt big = driver.attemptShared("semaphore:big", "big", new Share(3, 3));
        assertThat(poll(big)).isEmpty();
        LockAttempt small = driver.attemptShared("semaphore:big", "small", PERMIT);
        assertThat(poll(small)).as("2 held + 1 would fit, but the weight-3 entry is ahead").isEmpty();

        assertThat(get(driver.release(a))).isTrue();
        assertThat(get(driver.release(b))).isTrue();
        Grant bigGrant = awaitGrant(big);
        assertThat(poll(small)).as("behind the weight-3 holder").isEmpty();
        CompletableFuture<Void> changed = small.changed().toCompletableFuture();
        assertThat(get(driver.release(bigGrant))).isTrue();
        changed.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
        Grant smallGrant = poll(small).orElseThrow();
        assertThat(smallGrant.fencingToken()).isGreaterThan(bigGrant.fencingToken());
        assertThat(get(driver.release(smallGrant))).isTrue();
    }

    @Test
    @DisplayName("READ/WRITE: readers together, the writer alone after them, a later reader behind the waiting"
            + " writer; tokens rise in arrival order")
    void readersAndWriters() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        Grant r1 = granted(driver.attemptShared("rw:accounts", "r1", Share.READ));
        Grant r2 = granted(driver.attemptShared("rw:accounts", "r2", Share.READ));
        LockAttempt writer = driver.attemptShared("rw:accounts", "w", Share.WRITE);
        assertThat(poll(writer)).isEmpty();
        LockAttempt r3 = driver.attemptShared("rw:accounts", "r3", Share.READ);
        assertThat(poll(r3)).as("a reader arriving after a waiting writer").isEmpty();
        CompletableFuture<Void> readerWoken = r3.changed().toCompletableFuture();

        assertThat(get(driver.release(r1))).isTrue();
        assertThat(poll(writer)).as("one reader still holds").isEmpty();
        assertThat(get(driver.release(r2))).isTrue();
        Grant w = awaitGrant(writer);
        assertThat(readerWoken).as("the readers' releases do not wake the reader behind the writer").isNotDone();
        assertThat(poll(r3)).as("behind the holding writer").isEmpty();
        CompletableFuture<Void> changed = r3.changed().toCompletableFuture();
        assertThat(get(driver.release(w))).isTrue();
        changed.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
        Grant r3Grant = poll(r3).orElseThrow();

        assertThat(w.fencingToken()).as("the writer's token exceeds the readers' before it")
                .isGreaterThan(r1.fencingToken()).isGreaterThan(r2.fencingToken());
        assertThat(r3Grant.fencingToken()).as("a later reader's exceeds the writer's").isGreaterThan(w.fencingToken());
        for (Grant g : List.of(r1, r2, w, r3Grant)) {
            assertThat(FencingEpoch.fits(g.fencingToken())).isTrue();
        }
        assertThat(get(driver.release(r3Grant))).isTrue();
    }

    @Test
    @DisplayName("renew and release compare owner and token: a stale grant neither renews nor releases a newer one")
    void staleGrants() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        Grant old = granted(driver.attemptShared("rw:stale", "old", Share.WRITE));
        assertThat(get(driver.renew(old, TTL))).isTrue();
        assertThat(get(driver.release(old))).isTrue();
        assertThat(get(driver.release(old))).as("released twice").isFalse();

        Grant next = granted(driver.attemptShared("rw:stale", "next", Share.WRITE));
        assertThat(get(driver.renew(old, TTL))).isFalse();
        assertThat(get(driver.release(old))).isFalse();
        assertThat(entries("rw:stale")).hasSize(1);
        assertThat(get(driver.renew(next, TTL))).isTrue();
        assertThat(get(driver.release(next))).isTrue();
        assertThat(get(driver.renew(next, TTL))).isFalse();
    }

    @Test
    @DisplayName("abandon deletes the entry and wakes the one behind; the emptied parent is reaped")
    void abandon() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        Grant holder = granted(driver.attemptShared("rw:abandon", "holder", Share.WRITE));
        LockAttempt first = driver.attemptShared("rw:abandon", "first", Share.WRITE);
        assertThat(poll(first)).isEmpty();
        LockAttempt second = driver.attemptShared("rw:abandon", "second", Share.WRITE);
        assertThat(poll(second)).isEmpty();
        CompletableFuture<Void> changed = second.changed().toCompletableFuture();
        Await.during(Duration.ofMillis(200), "the second waits on the first", () -> !changed.isDone());

        get(first.abandon());
        changed.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
        assertThat(entries("rw:abandon")).hasSize(2);
        assertThat(poll(second)).as("the holder still holds").isEmpty();
        CompletableFuture<Void> next = second.changed().toCompletableFuture();
        assertThat(get(driver.release(holder))).isTrue();
        next.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
        assertThat(get(driver.release(poll(second).orElseThrow()))).isTrue();

        // Abandoned before its create has answered: the entry is deleted when it does.
        get(driver.attemptShared("rw:abandon", "lone", Share.WRITE).abandon());
        Await.until(WITHIN, "the emptied parent is reaped", () -> !inspector.exists(Paths.sharedPath(namespace, "rw:abandon")));
    }

    @Test
    @DisplayName("a dead holder's entry stops counting once the server expires its session (the TTL)")
    void deadHolder() throws Exception {
        Duration ttl = Duration.ofSeconds(1);
        TcpProxy proxy = TcpProxy.start(server().host(), server().port());
        closeAfter.add(proxy);
        ZooKeeperDriver doomed = driver("zookeeper://127.0.0.1:" + proxy.port(), ttl);
        // A long TTL for the survivor: the driver deletes a grant's entry left unrenewed past its TTL.
        ZooKeeperDriver survivor = driver(server().endpoint(), TTL);
        Grant dead = granted(doomed.attemptShared("semaphore:dead", "dead", new Share(2, 3)));
        Grant alive = granted(survivor.attemptShared("semaphore:dead", "alive", PERMIT));
        LockAttempt waiter = survivor.attemptShared("semaphore:dead", "waiter", new Share(2, 3));
        assertThat(poll(waiter)).isEmpty();

        proxy.blackhole();
        Grant granted = awaitGrant(waiter);
        assertThat(entries("semaphore:dead")).hasSize(2);
        assertThat(granted.fencingToken()).isGreaterThan(dead.fencingToken()).isGreaterThan(alive.fencingToken());
        assertThat(get(survivor.release(granted))).isTrue();
        assertThat(get(survivor.release(alive))).isTrue();
    }

    @Test
    @DisplayName("a lock and a shared name of the same name do not see each other")
    void apartFromTheLock() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        Grant lock = granted(driver.attempt("jobs", "lock-owner"));
        Grant share = granted(driver.attemptShared("jobs", "share-owner", Share.WRITE));
        assertThat(poll(driver.attempt("jobs", "lock-waiter"))).as("the lock is held").isEmpty();
        assertThat(poll(driver.attemptShared("jobs", "share-waiter", Share.READ))).as("the shared name is written").isEmpty();
        assertThat(get(driver.release(share))).isTrue();
        assertThat(get(driver.renew(lock, TTL))).as("the lock lives on").isTrue();
        assertThat(get(driver.holder("jobs"))).map(h -> h.owner()).contains("lock-owner");
        assertThat(get(driver.release(lock))).isTrue();
    }

    @Test
    @DisplayName("listing the namespace's holders skips shared names")
    void listingSkipsSharedNames() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        Grant lock = granted(driver.attempt("a", "lock-owner"));
        Grant read = granted(driver.attemptShared("a", "reader", Share.READ));
        Grant permit = granted(driver.attemptShared("semaphore:b", "permit", PERMIT));
        List<NamedHolder> holders = get(driver.holders(Duration.ofSeconds(10)));
        assertThat(holders).extracting(NamedHolder::name).containsExactly("a");
        assertThat(holders.get(0).holder().owner()).isEqualTo("lock-owner");
        assertThat(get(driver.holder("semaphore:b"))).isEmpty();
        for (Grant g : List.of(lock, read, permit)) {
            assertThat(get(driver.release(g))).isTrue();
        }
    }

    @Test
    @DisplayName("closing the driver fails a pending wait with CLOSED")
    void closeFailsTheWait() throws Exception {
        ZooKeeperDriver driver = driver(server().endpoint(), TTL);
        granted(driver.attemptShared("rw:close", "holder", Share.READ));
        LockAttempt writer = driver.attemptShared("rw:close", "writer", Share.WRITE);
        assertThat(poll(writer)).isEmpty();
        CompletableFuture<Void> changed = writer.changed().toCompletableFuture();
        driver.close();
        assertThatThrownBy(() -> changed.get(WITHIN.toSeconds(), TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CLOSED);
    }

    // ----- helpers ---------------------------------------------------------------------------------

    private ZooKeeperDriver driver(String endpoint, Duration ttl) {
        ZooKeeperDriver driver = ZooKeeperDriver.open(new LockConfig("zookeeper", List.of(endpoint), namespace, ttl,
                Duration.ofSeconds(10), Duration.ofSeconds(5), Map.of()));
        closeAfter.add(driver);
        return driver;
    }

    /** The entries queued under the shared name, as the server has them. */
    private List<String> entries(String name) throws Exception {
        try {
            return inspector.curator().getChildren().forPath(Paths.sharedPath(namespace, name));
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    private static Optional<Grant> poll(LockAttempt attempt) throws Exception {
        return get(attempt.poll(TTL));
    }

    private static Grant granted(LockAttempt attempt) throws Exception {
        return poll(attempt).orElseThrow(() -> new AssertionError("not granted at once: " + attempt));
    }

    /** Drives the attempt as lock-api does: poll, wait for a change, poll again. */
    private static Grant awaitGrant(LockAttempt attempt) throws Exception {
        long end = System.nanoTime() + WITHIN.toNanos();
        while (true) {
            Optional<Grant> grant = poll(attempt);
            if (grant.isPresent()) {
                return grant.get();
            }
            long left = end - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("not granted within " + WITHIN + ": " + attempt);
            }
            attempt.changed().toCompletableFuture().get(left, TimeUnit.NANOSECONDS);
        }
    }

    private static <T> T get(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(WITHIN.toSeconds(), TimeUnit.SECONDS);
    }
}
