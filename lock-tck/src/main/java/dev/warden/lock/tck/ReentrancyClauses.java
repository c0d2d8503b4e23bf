package dev.warden.lock.tck;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Reentrancy per thread, leases as values another thread may release, and the {@code Lock} view.
 */
abstract class ReentrancyClauses {

    private final LockKit kit;

    ReentrancyClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("the same thread re-acquires with the same token; holds unwind one by one")
    void holdCountUnwinds() {
        LockClient c = kit.client();
        LockClient other = kit.client();
        String name = kit.newName();
        DistributedLock lock = c.lock(name);
        Lease outer = lock.acquire();
        Lease inner = lock.acquire();
        assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
        assertThat(inner.release()).isEqualTo(ReleaseOutcome.STILL_HELD);
        assertThat(outer.isValid()).isTrue();
        assertThat(kit.onServer(name)).isTrue();
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        assertThat(outer.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(kit.freed(name)).isTrue();
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("a lease can be released from another thread")
    void releasedFromAnotherThread() throws Exception {
        LockClient c = kit.client();
        String name = kit.newName();
        Lease lease = c.lock(name).acquire();
        ReleaseOutcome outcome = kit.threads(1).submit(lease::release).get(10, TimeUnit.SECONDS);
        assertThat(outcome).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(kit.freed(name)).isTrue();
        assertThat(kit.client().lock(name).tryAcquire(Duration.ZERO)).isPresent();
    }

    @Test
    @DisplayName("the java.util.concurrent Lock adapter is reentrant and refuses unlock by a non-holder")
    void lockAdapter() throws Exception {
        LockClient c = kit.client();
        String name = kit.newName();
        Lock lock = c.lock(name).asLock();
        lock.lock();
        assertThat(lock.tryLock()).isTrue();
        assertThatThrownBy(() -> kit.threads(1).submit(lock::unlock).get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(IllegalMonitorStateException.class);
        lock.unlock();
        assertThat(kit.onServer(name)).isTrue();
        lock.unlock();
        assertThat(kit.freed(name)).isTrue();
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
        // A free lock within the kit's slack: how long an acquisition takes on a loaded host is not what this checks.
        assertThat(lock.tryLock(kit.slack().toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        c.lock(name).asLock().unlock();
        assertThat(kit.freed(name)).as("every view of one lock agrees on its holder").isTrue();
        Thread.currentThread().interrupt();
        try {
            assertThat(lock.tryLock()).as("tryLock() ignores the interrupt flag").isTrue();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        lock.unlock();
    }
}
