package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Leaks, the Lock view after a loss, and listeners told once whoever notices first. */
class LeaseLifecycleTest {

    private final VirtualClient v = new VirtualClient();

    @AfterEach
    void close() {
        v.close();
    }

    @Test
    @DisplayName("a lease dropped while held is reported with where it was acquired; a released one is not")
    void leakReport() throws Exception {
        acquireAndDrop("dropped");
        acquireReleaseAndDrop("released");
        long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (v.leaks.isEmpty() && System.nanoTime() - end < 0) {
            System.gc();
            // The keeper's renewal polls for leaks, as it does for a real dropped lease.
            v.clock.advance(Duration.ofSeconds(1));
            Thread.sleep(5);
        }
        assertThat(v.leaks).singleElement().satisfies(leak -> {
            assertThat(leak.name()).isEqualTo("dropped");
            assertThat(leak.acquiredAt()).contains("acquireAndDrop").doesNotContain("dev.warden.lock.internal.DefaultLock.");
        });
        for (int i = 0; i < 5; i++) {
            System.gc();
            v.clock.advance(Duration.ofSeconds(1));
        }
        assertThat(v.leaks).as("the released lease is never reported").hasSize(1);
    }

    private void acquireAndDrop(String name) {
        v.client.lock(name).acquire();
    }

    private void acquireReleaseAndDrop(String name) {
        v.client.lock(name).acquire().release();
    }

    @Test
    @DisplayName("unlock() through the Lock view after a loss removes the hold and throws LOST")
    void unlockAfterLossThrows() {
        Lock lock = v.client.lock("a").withMaxHoldTime(Duration.ofMillis(100)).asLock();
        lock.lock();
        v.clock.advance(Duration.ofMillis(100));
        assertThatThrownBy(lock::unlock).isInstanceOfSatisfying(LockException.class, e -> {
            assertThat(e.reason()).isEqualTo(LockException.Reason.LOST);
            assertThat(e.getMessage()).contains("MAX_HOLD_TIME");
        });
        assertThatThrownBy(lock::unlock).as("the hold is gone").isInstanceOf(IllegalMonitorStateException.class);
        assertThat(lock.tryLock()).isTrue();
        lock.unlock();
    }

    @Test
    @DisplayName("isValid() and the keeper's timer: whichever sees the deadline first, listeners run once")
    void listenersOnceWhoeverNoticesFirst() {
        Lease byTimer = v.client.lock("timer").acquire();
        Lease byCaller = v.client.lock("caller").acquire();
        AtomicInteger timerTold = new AtomicInteger();
        AtomicInteger callerTold = new AtomicInteger();
        byTimer.onLost(l -> timerTold.incrementAndGet());
        byCaller.onLost(l -> callerTold.incrementAndGet());
        v.clock.jump(VirtualClient.TTL);
        assertThat(byCaller.isValid()).isFalse();
        assertThat(callerTold).hasValue(1);
        v.clock.advance(Duration.ZERO);
        assertThat(byTimer.isValid()).isFalse();
        assertThat(timerTold).hasValue(1);
        assertThat(callerTold).hasValue(1);
        assertThat(v.losses).extracting(l -> l.reason()).containsOnly(LostReason.EXPIRED).hasSize(2);
    }

    @Test
    @DisplayName("a listener may ask its own lease whether it is valid")
    void listenerAsksItsLease() {
        v.driver.holdRenewals();
        Lease lease = v.client.lock("a").acquire();
        AtomicInteger answers = new AtomicInteger();
        lease.onLost(l -> answers.addAndGet(lease.isValid() ? 100 : 1));
        v.clock.advance(VirtualClient.TTL);
        assertThat(answers).hasValue(1);
    }
}
