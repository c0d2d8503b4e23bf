package dev.warden.lock.tck;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.ReadWriteLock;
import dev.warden.lock.Semaphore;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Semaphores and read-write locks: counts and exclusion under contention from several clients, checked
 * by the history checker; arrival order (no barging, writers not starved); token order between grants
 * that cannot be held together; nothing left behind by a request that gives up. "Nothing left behind" is
 * read through the recipe itself: a leftover entry would hold back a later request in arrival order, so
 * a later request that is granted at once proves there is none.
 */
abstract class SharedRecipeClauses {

    /** A read-write lock's writer in the history check: more than every reader together. */
    private static final int WRITER = 1_000_000;

    private final LockKit kit;

    SharedRecipeClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("a semaphore of 3: 12 threads on 3 clients asking for 1 or 2 permits never hold more than 3")
    void permitCountHolds() throws Exception {
        if (refusedHere()) {
            return;
        }
        LockHistory history = new LockHistory();
        Map<String, Integer> weights = new ConcurrentHashMap<>();
        LockClient[] clients = new LockClient[3];
        for (int c = 0; c < clients.length; c++) {
            clients[c] = kit.observedClient(history.observer("client" + c));
        }
        String name = kit.newName();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        int threads = 12;
        int rounds = 10;
        ExecutorService pool = kit.threads(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Semaphore semaphore = clients[t % clients.length].semaphore(name, 3);
            int n = t % 4 == 0 ? 2 : 1;
            work.add(pool.submit(() -> {
                start.await();
                for (int r = 0; r < rounds; r++) {
                    try (Lease lease = semaphore.acquire(n)) {
                        weights.put(LockHistory.leaseKey(lease.name(), lease.fencingToken()), n);
                        int now = inside.addAndGet(n);
                        most.accumulateAndGet(now, Math::max);
                        Thread.yield();
                        inside.addAndGet(-n);
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : work) {
            f.get(2, TimeUnit.MINUTES);
        }
        assertThat(most.get()).as("most permits held at once, counted inside").isBetween(1, 3);
        assertThat(history.grants()).isEqualTo(threads * rounds);
        assertThat(history.shareViolations(weights, 3)).isEmpty();
    }

    @Test
    @DisplayName("permits go in arrival order: a request for 3 waiting behind a holder holds back a later request for 1")
    void noBarging() throws Exception {
        if (refusedHere()) {
            return;
        }
        String name = kit.newName();
        Semaphore a = kit.client().semaphore(name, 3);
        Semaphore b = kit.client().semaphore(name, 3);
        Semaphore c = kit.client().semaphore(name, 3);
        Lease first = a.acquire(1);
        CompletableFuture<Lease> many = b.acquireAsync(3);
        // Once the request for 3 waits on the server, a request for 1 must queue behind it, though 2 are free.
        Await.during(kit.renewInterval(), "the request for 3 waits while 1 permit is held", () -> !many.isDone());
        assertThat(c.tryAcquire(1, kit.renewInterval())).as("a later request for 1 while a request for 3 waits").isEmpty();
        CompletableFuture<Lease> later = c.acquireAsync(1);
        first.release();
        Lease three = many.get(kit.slack().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(three.fencingToken()).isGreaterThan(first.fencingToken());
        Await.during(kit.renewInterval(), "the request for 1 waits while all 3 are held", () -> !later.isDone());
        three.release();
        Lease one = later.get(kit.slack().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(one.fencingToken()).isGreaterThan(three.fencingToken());
        one.release();
    }

    @Test
    @DisplayName("each permit is a lease of its own: distinct tokens, kept past the TTL by the keeper, released one by one")
    void permitsAreLeases() throws Exception {
        if (refusedHere()) {
            return;
        }
        String name = kit.newName();
        Semaphore semaphore = kit.client().semaphore(name, 2);
        Lease one = semaphore.acquire();
        Lease two = kit.client().semaphore(name, 2).acquire();
        assertThat(one.fencingToken()).isNotEqualTo(two.fencingToken());
        assertThat(one.name()).isEqualTo("semaphore:" + name);
        Semaphore third = kit.client().semaphore(name, 2);
        Await.during(kit.ttl().multipliedBy(2), "both permits stay valid past the TTL", () -> one.isValid() && two.isValid());
        assertThat(third.tryAcquire(Duration.ZERO)).as("a third permit of 2").isEmpty();
        one.release();
        Lease three = third.tryAcquire(kit.slack()).orElseThrow(() -> new AssertionError("a released permit came back"));
        assertThat(three.fencingToken()).isGreaterThan(one.fencingToken());
        assertThat(two.isValid()).isTrue();
        two.release();
        three.release();
    }

    @Test
    @DisplayName("a request that times out, is cancelled or interrupted leaves nothing behind to hold back the next")
    void givingUpLeavesNothing() throws Exception {
        if (refusedHere()) {
            return;
        }
        String name = kit.newName();
        Lease held = kit.client().semaphore(name, 1).acquire();
        Semaphore waiting = kit.client().semaphore(name, 1);
        assertThat(waiting.tryAcquire(1, Duration.ofMillis(200))).isEmpty();
        CompletableFuture<Lease> cancelled = waiting.acquireAsync(1);
        Thread interrupted = new Thread(() -> {
            try {
                waiting.acquire();
            } catch (LockException expected) {
                // INTERRUPTED
            }
        });
        interrupted.start();
        Await.during(kit.renewInterval(), "the cancelled and the interrupted requests wait for the held permit",
                () -> !cancelled.isDone() && interrupted.isAlive());
        cancelled.cancel(true);
        interrupted.interrupt();
        interrupted.join(kit.slack().toMillis());
        assertThat(interrupted.isAlive()).isFalse();
        held.release();
        // Were any of the three still queued ahead, a request for the one permit would have to wait for it.
        Semaphore next = kit.client().semaphore(name, 1);
        Await.until(kit.slack(), "the permit is free for a request that does not wait",
                () -> next.tryAcquire(Duration.ZERO).map(l -> {
                    l.release();
                    return true;
                }).orElse(false));
    }

    @Test
    @DisplayName("a semaphore refuses a count or a request out of range with IllegalArgumentException")
    void badCounts() {
        if (refusedHere()) {
            return;
        }
        LockClient client = kit.client();
        assertThatThrownBy(() -> client.semaphore(kit.newName(), 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> client.semaphore("", 1)).isInstanceOf(IllegalArgumentException.class);
        Semaphore s = client.semaphore(kit.newName(), 2);
        assertThatThrownBy(() -> s.acquire(3)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1..2");
        assertThatThrownBy(() -> s.tryAcquire(0, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("readers hold together, a writer alone, and a reader arriving behind a waiting writer waits for it")
    void readersTogetherWriterAlone() throws Exception {
        if (refusedHere()) {
            return;
        }
        String name = kit.newName();
        ReadWriteLock a = kit.client().readWriteLock(name);
        ReadWriteLock b = kit.client().readWriteLock(name);
        ReadWriteLock c = kit.client().readWriteLock(name);
        Lease r1 = a.readLock().acquire();
        Lease r2 = b.readLock().tryAcquire(kit.slack()).orElseThrow(() -> new AssertionError("a second reader beside the first"));
        CompletableFuture<Lease> writer = c.writeLock().acquireAsync();
        Await.during(kit.renewInterval(), "the writer waits for the readers", () -> !writer.isDone());
        assertThat(a.readLock().acquireAsync(Duration.ofMillis(300)))
                .as("a reader arriving behind the waiting writer").failsWithin(kit.slack());
        r1.release();
        assertThat(writer).as("the writer waits for the last reader").isNotDone();
        r2.release();
        Lease w = writer.get(kit.slack().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(w.fencingToken()).isGreaterThan(Math.max(r1.fencingToken(), r2.fencingToken()));
        assertThat(b.readLock().tryAcquire(Duration.ofMillis(200))).as("a reader while the writer holds").isEmpty();
        assertThat(b.writeLock().tryAcquire(Duration.ZERO)).as("a second writer").isEmpty();
        CompletableFuture<Lease> reader = b.readLock().acquireAsync();
        w.release();
        Lease after = reader.get(kit.slack().toMillis(), TimeUnit.MILLISECONDS);
        assertThat(after.fencingToken()).isGreaterThan(w.fencingToken());
        after.release();
    }

    @Test
    @DisplayName("a writer is not starved by a continuous stream of overlapping readers")
    void writerNotStarved() throws Exception {
        if (refusedHere()) {
            return;
        }
        String name = kit.newName();
        LockClient readers = kit.client();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong reads = new AtomicLong();
        int threads = 4;
        ExecutorService pool = kit.threads(threads);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            work.add(pool.submit(() -> {
                DistributedLock read = readers.readWriteLock(name).readLock();
                while (!stop.get()) {
                    try (Lease lease = read.acquire()) {
                        reads.incrementAndGet();
                        // Long enough that, with four readers, one is nearly always inside.
                        Thread.sleep(20);
                    }
                }
                return null;
            }));
        }
        try {
            Await.until(kit.slack(), "the readers take turns", () -> reads.get() > 20);
            // A bound, not a speed claim: a lock that let each new reader in beside the others would keep
            // this writer out for as long as the stream lasts.
            Optional<Lease> w = kit.client().readWriteLock(name).writeLock().tryAcquire(kit.slack().multipliedBy(2));
            assertThat(w).as("the writer got in under a continuous reader load").isPresent();
            long during = reads.get();
            Await.during(Duration.ofMillis(50), "no reader completes a hold while the writer holds",
                    () -> reads.get() == during);
            w.get().release();
        } finally {
            stop.set(true);
        }
        for (Future<?> f : work) {
            f.get(1, TimeUnit.MINUTES);
        }
    }

    @Test
    @DisplayName("16 readers and 2 writers on 2 clients: no reader beside a writer, and each writer's token above the readers before it")
    void readWriteHistory() throws Exception {
        if (refusedHere()) {
            return;
        }
        LockHistory history = new LockHistory();
        Map<String, Integer> weights = new ConcurrentHashMap<>();
        LockClient[] clients = {kit.observedClient(history.observer("client0")), kit.observedClient(history.observer("client1"))};
        String name = kit.newName();
        FencedRegister register = new FencedRegister();
        AtomicInteger readersInside = new AtomicInteger();
        AtomicInteger writersInside = new AtomicInteger();
        AtomicInteger clashes = new AtomicInteger();
        int readers = 16;
        int writers = 2;
        int rounds = 8;
        ExecutorService pool = kit.threads(readers + writers);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < readers + writers; t++) {
            boolean writer = t < writers;
            ReadWriteLock rw = clients[t % 2].readWriteLock(name);
            work.add(pool.submit(() -> {
                start.await();
                for (int r = 0; r < rounds; r++) {
                    try (Lease lease = writer ? rw.writeLock().acquire() : rw.readLock().acquire()) {
                        weights.put(LockHistory.leaseKey(lease.name(), lease.fencingToken()), writer ? WRITER : 1);
                        if (writer) {
                            writersInside.incrementAndGet();
                            if (readersInside.get() > 0 || writersInside.get() > 1) {
                                clashes.incrementAndGet();
                            }
                            register.write(lease.fencingToken(), register.value() + 1);
                            Thread.yield();
                            writersInside.decrementAndGet();
                        } else {
                            readersInside.incrementAndGet();
                            if (writersInside.get() > 0) {
                                clashes.incrementAndGet();
                            }
                            Thread.yield();
                            readersInside.decrementAndGet();
                        }
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : work) {
            f.get(2, TimeUnit.MINUTES);
        }
        assertThat(clashes.get()).as("a reader inside with a writer, or two writers, counted inside").isZero();
        assertThat(register.rejected()).as("writers' fenced writes refused").isZero();
        assertThat(register.value()).isEqualTo(writers * rounds);
        assertThat(history.grants()).isEqualTo((readers + writers) * rounds);
        assertThat(history.shareViolations(weights, WRITER)).isEmpty();
    }

    @Test
    @DisplayName("a reader's write-back after a writer is refused by a fenced resource")
    void staleReaderRefused() throws Exception {
        if (refusedHere()) {
            return;
        }
        String name = kit.newName();
        FencedRegister register = new FencedRegister();
        Lease reader = kit.client().readWriteLock(name).readLock().acquire();
        long readerToken = reader.fencingToken();
        reader.release();
        Lease writer = kit.client().readWriteLock(name).writeLock().acquire();
        assertThat(register.write(writer.fencingToken(), 1)).isTrue();
        writer.release();
        assertThat(register.write(readerToken, 2)).as("the reader's late write-back").isFalse();
        assertThat(register.value()).isEqualTo(1);
    }

    @Test
    @DisplayName("a thread re-enters the side it holds, and is refused the other side rather than waiting for itself")
    void reentryAndUpgrade() {
        if (refusedHere()) {
            return;
        }
        ReadWriteLock rw = kit.client().readWriteLock(kit.newName());
        Lease read = rw.readLock().acquire();
        Lease again = rw.readLock().acquire();
        assertThat(again.fencingToken()).isEqualTo(read.fencingToken());
        assertThatThrownBy(() -> rw.writeLock().tryAcquire(Duration.ZERO)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("read lock");
        again.release();
        read.release();
        Lease write = rw.writeLock().acquire();
        assertThatThrownBy(() -> rw.readLock().acquire()).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("write lock");
        java.util.concurrent.locks.Lock view = rw.writeLock().asLock();
        view.lock();
        view.unlock();
        write.release();
        assertThat(rw.writeLock().tryAcquire(Duration.ZERO)).map(l -> {
            l.release();
            return true;
        }).as("the write lock is free once both holds are released").contains(true);
    }

    private boolean refusedHere() {
        return refused(kit);
    }

    /**
     * Where the client offers no shared recipes (the migrating step), that they are refused with
     * {@code CONFIGURATION} is all a shared-recipe clause checks: true then.
     */
    static boolean refused(LockKit kit) {
        if (kit.offersSharedRecipes()) {
            return false;
        }
        LockClient client = kit.client();
        assertThatThrownBy(() -> client.semaphore(kit.newName(), 1)).isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThatThrownBy(() -> client.readWriteLock(kit.newName())).isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        return true;
    }
}
