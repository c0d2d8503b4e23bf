package dev.warden.reactor;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.RepeatedTest;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ReactiveLock} on the memory backend, and cancellations racing grants. */
@DisplayName("ReactiveLock, memory backend")
class MemoryReactiveLockTest extends ReactiveLockClauses {

    private static final String STORE = "memory://reactor-" + UUID.randomUUID();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "memory", "warden.lock.endpoints", STORE);
    }

    @RepeatedTest(5)
    @DisplayName("cancellations racing grants, many times: every grant is delivered or released, the lock ends free")
    void cancellationsRacingGrants() {
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger released = new AtomicInteger();
        LockClient c = client(new LockObserver() {
            @Override
            public void granted(String name, long fencingToken, Duration waited) {
                granted.incrementAndGet();
            }

            @Override
            public void released(String name, long fencingToken, ReleaseOutcome outcome) {
                released.incrementAndGet();
            }
        });
        LockClient other = client();
        String name = newName();
        ReactiveLock lock = ReactiveLock.of(c.lock(name));
        AtomicInteger delivered = new AtomicInteger();
        AtomicInteger bodies = new AtomicInteger();

        for (int i = 0; i < 400; i++) {
            Disposable run = i % 2 == 0
                    ? lock.acquire().subscribeWith(new BaseSubscriber<Lease>() {
                        @Override
                        protected void hookOnNext(Lease lease) {        // delivered: ours to release, even
                            delivered.incrementAndGet();                 // when it arrives as we cancel
                            lease.releaseAsync();
                        }
                    })
                    : lock.withLockMono(lease -> Mono.fromRunnable(bodies::incrementAndGet)).subscribe();
            spin(i % 40 * 5_000L);                                       // 0..195 µs: cancel at varied moments
            run.dispose();
        }

        assertThat(freeFor(other, name, DEADLINE)).as("nothing left held").isTrue();
        Await.until(DEADLINE, "every grant released (" + delivered + " delivered, " + bodies + " bodies ran)",
                () -> granted.get() == released.get());
    }

    private static void spin(long nanos) {
        long end = System.nanoTime() + nanos;
        while (System.nanoTime() - end < 0) {
            Thread.onSpinWait();
        }
    }
}
