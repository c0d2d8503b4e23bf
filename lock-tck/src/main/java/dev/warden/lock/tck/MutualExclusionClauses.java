package dev.warden.lock.tck;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion: concurrent holders never overlap, across threads and clients, and no client
 * shuts another out.
 */
abstract class MutualExclusionClauses {

    private final LockKit kit;

    MutualExclusionClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("16 threads on 2 clients lose no update and make no stale write")
    void noLostUpdatesNoStaleWrites() throws Exception {
        LockHistory history = new LockHistory();
        LockClient[] clients = {kit.observedClient(history.observer("client0")), kit.observedClient(history.observer("client1"))};
        String name = kit.newName();
        int threads = 16;
        int rounds = 25;
        FencedRegister register = new FencedRegister();
        long[] counter = {0};
        ExecutorService pool = kit.threads(threads);
        CountDownLatch start = new CountDownLatch(1);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            LockClient c = clients[t % 2];
            work.add(pool.submit(() -> {
                start.await();
                DistributedLock lock = c.lock(name);
                for (int r = 0; r < rounds; r++) {
                    try (Lease lease = lock.acquire()) {
                        long seen = counter[0];
                        Thread.yield();
                        counter[0] = seen + 1;
                        register.write(lease.fencingToken(), seen + 1);
                    }
                }
                return null;
            }));
        }
        start.countDown();
        for (Future<?> f : work) {
            f.get(2, TimeUnit.MINUTES);
        }
        assertThat(counter[0]).as("non-atomic counter incremented under the lock").isEqualTo(threads * rounds);
        assertThat(register.rejected()).as("stale fenced writes").isZero();
        assertThat(register.value()).isEqualTo(threads * rounds);
        assertThat(history.grants()).isEqualTo(threads * rounds);
        assertThat(history.violations()).isEmpty();
    }

    @Test
    @DisplayName("a waiter in another client is not shut out by one client's busy threads")
    void noStarvationAcrossClients() throws Exception {
        LockClient busy = kit.client();
        LockClient other = kit.client();
        String name = kit.newName();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong busyGrants = new AtomicLong();
        int threads = 8;
        ExecutorService pool = kit.threads(threads);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            work.add(pool.submit(() -> {
                DistributedLock lock = busy.lock(name);
                while (!stop.get()) {
                    try (Lease lease = lock.acquire()) {
                        busyGrants.incrementAndGet();
                        // Held long enough that the busy client always has a thread queued.
                        Thread.sleep(2);
                    }
                }
                return null;
            }));
        }
        try {
            Await.until(kit.slack(), "the busy client takes turns", () -> busyGrants.get() > 20);
            // A deadline, not a speed claim: a client that handed the lock only among its own
            // threads would keep this waiter out for ever.
            Optional<Lease> lease = other.lock(name).tryAcquire(kit.slack().multipliedBy(4));
            assertThat(lease).as("the other client's waiter got the lock").isPresent();
            lease.get().release();
        } finally {
            stop.set(true);
        }
        for (Future<?> f : work) {
            f.get(1, TimeUnit.MINUTES);
        }
    }
}
