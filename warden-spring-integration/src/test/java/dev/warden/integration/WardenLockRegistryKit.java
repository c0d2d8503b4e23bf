package dev.warden.integration;

import dev.warden.lock.Lease;
import dev.warden.lock.LockAdmin;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import org.junit.jupiter.api.Test;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.DefaultCandidate;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What Warden adds to Spring's lock registry contract, and where it answers differently, on every backend: the
 * holder's lease, a {@code ttl} as a maximum hold time, {@code renewLock} as a check of the lease, the exceptions
 * Warden's are translated into, interrupts, keys and names, and holds shared by registries over one client.
 */
abstract class WardenLockRegistryKit extends SpringLockRegistryKit {

    @Test
    void leaseShowsTheHoldersTokenAndValidity() {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("orders:42");
        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::lease);

        lock.lock();
        Lease first = lock.lease();
        assertThat(lock.isHeldByCurrentThread()).isTrue();
        assertThat(first.name()).isEqualTo("orders:42");
        assertThat(first.isValid()).isTrue();
        assertThat(first.remaining()).isPositive();
        assertThat(client.admin().holder("orders:42")).map(LockAdmin.Holding::token).contains(first.fencingToken());

        lock.lock();                                                         // reentrant: the same lease
        assertThat(lock.lease().fencingToken()).isEqualTo(first.fencingToken());
        lock.unlock();
        assertThat(lock.lease().isValid()).isTrue();
        lock.unlock();

        assertThat(lock.isHeldByCurrentThread()).isFalse();
        assertThat(first.isValid()).as("the view of a released hold").isFalse();
        assertThat(client.admin().holder("orders:42")).isEmpty();

        lock.lock();
        try {
            assertThat(lock.lease().fencingToken()).as("the next grant's token").isGreaterThan(first.fencingToken());
        } finally {
            lock.unlock();
        }
    }

    @Test
    void leaseIsReadOnly() {
        WardenLock lock = newRegistry().obtain("foo");
        lock.lock();
        try {
            Lease lease = lock.lease();
            assertThatThrownBy(lease::release).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(lease::releaseAsync).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(lease::close).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> lease.releaseAfter(Duration.ofSeconds(1))).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> lease.setMaxHoldTime(Duration.ofSeconds(1))).isInstanceOf(UnsupportedOperationException.class);
            assertThat(lease.isValid()).isTrue();
        } finally {
            lock.unlock();
        }
        assertThat(client.admin().holder("foo")).isEmpty();
    }

    @Test
    void leaseOfAnotherThreadsHoldIsNotThisThreads() throws Exception {
        WardenLock lock = newRegistry().obtain("foo");
        lock.lock();
        try {
            CompletableFuture<Boolean> elsewhere = CompletableFuture.supplyAsync(lock::isHeldByCurrentThread);
            assertThat(elsewhere.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isFalse();
            CompletableFuture<Lease> leaseElsewhere = CompletableFuture.supplyAsync(lock::lease);
            assertThat(leaseElsewhere).failsWithin(PATIENCE)
                    .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .withCauseInstanceOf(IllegalMonitorStateException.class);
        } finally {
            lock.unlock();
        }
    }

    @Test
    void ttlIsAMaximumHoldTime() {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("foo");
        lock.lock(Duration.ofMillis(200));
        AtomicReference<LeaseLost> told = new AtomicReference<>();
        lock.lease().onLost(told::set);
        awaitLost(lock.lease());
        await("the loss to be told", () -> told.get() != null);
        assertThat(told.get().reason()).isEqualTo(LostReason.MAX_HOLD_TIME);
        waitForExpire("foo");                                                // the keeper releases it on the server

        WardenLock elsewhere = registryOfAnotherProcess().obtain("foo");
        assertThat(elsewhere.tryLock()).as("released on the server at its limit").isTrue();
        elsewhere.unlock();

        assertThatThrownBy(lock::unlock)
                .isInstanceOf(ConcurrentModificationException.class)
                .hasMessageContaining("MAX_HOLD_TIME")
                .cause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.LOST));
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void renewLockRestartsTheLimitAndFailsOnceLost() {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("foo");
        Duration limit = Duration.ofSeconds(1);
        lock.lock(limit);
        long until = System.nanoTime() + limit.multipliedBy(2).toNanos();
        while (System.nanoTime() - until < 0) {                              // two limits long, renewed all along
            registry.renewLock("foo");
            holdValidFor(lock.lease(), Duration.ofMillis(50));
        }
        awaitLost(lock.lease());                                             // no more renewals: it ends
        assertThatThrownBy(() -> registry.renewLock("foo"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("had been lost");
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(() -> registry.renewLock("foo")).isInstanceOf(IllegalMonitorStateException.class);
    }

    @Test
    void renewLockWithTtlSetsALimitOnAnUnlimitedHold() {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("foo");
        lock.lock();
        registry.renewLock("foo", Duration.ofMillis(100));
        awaitLost(lock.lease());
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThatIllegalArgumentException().isThrownBy(() -> registry.renewLock("foo", Duration.ZERO));
    }

    @Test
    void reentryWithATtlMovesTheSharedLimit() {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("foo");
        lock.lock();
        lock.lock(Duration.ofMillis(100));                                   // as Spring's Redis registry re-expires the key
        awaitLost(lock.lease());
        assertThatThrownBy(lock::unlock).as("the inner hold").isInstanceOf(ConcurrentModificationException.class);
        assertThatThrownBy(lock::unlock).as("the outer hold").isInstanceOf(ConcurrentModificationException.class);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void failedAcquisitionsAreCannotAcquireLockExceptions() {
        LockClient closing = newClient(Map.of());
        WardenLockRegistry registry = new WardenLockRegistry(closing);
        WardenLock lock = registry.obtain("foo");
        closing.close();
        assertThatThrownBy(() -> registry.obtain("bar")).isInstanceOf(CannotAcquireLockException.class);
        assertThatThrownBy(lock::lock).isInstanceOf(CannotAcquireLockException.class)
                .cause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
        assertThatThrownBy(lock::tryLock).isInstanceOf(CannotAcquireLockException.class);
        assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(CannotAcquireLockException.class);
        assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(CannotAcquireLockException.class);
        assertThat(lock.isHeldByCurrentThread()).isFalse();
    }

    @Test
    void closingTheClientLosesItsHolds() {
        LockClient closing = newClient(Map.of());
        WardenLock lock = new WardenLockRegistry(closing).obtain("foo");
        lock.lock();
        Lease lease = lock.lease();
        closing.close();
        assertThat(lease.isValid()).isFalse();
        assertThatThrownBy(lock::unlock).isInstanceOf(ConcurrentModificationException.class);
        assertThat(client.admin().holder("foo")).isEmpty();
    }

    @Test
    void lockIsNotInterruptible() throws Exception {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("foo");
        lock.lock();
        AtomicBoolean heldAfterInterrupt = new AtomicBoolean();
        AtomicBoolean flagKept = new AtomicBoolean();
        Thread waiter = new Thread(() -> {
            lock.lock();
            try {
                heldAfterInterrupt.set(lock.isHeldByCurrentThread() && lock.lease().isValid());
                flagKept.set(Thread.currentThread().isInterrupted());
            } finally {
                lock.unlock();
            }
        });
        waiter.start();
        await("the waiter to wait", () -> waiter.getState() == Thread.State.WAITING
                || waiter.getState() == Thread.State.TIMED_WAITING);
        waiter.interrupt();                                                  // however soon it is seen, lock() goes on
        lock.unlock();
        waiter.join(PATIENCE.toMillis());
        assertThat(waiter.isAlive()).isFalse();
        assertThat(heldAfterInterrupt).isTrue();
        assertThat(flagKept).isTrue();
    }

    @Test
    void interruptedLockInterruptiblyLeavesNothingHeld() throws Exception {
        WardenLockRegistry registry = newRegistry();
        WardenLock lock = registry.obtain("foo");
        lock.lock();
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        AtomicBoolean flagAfter = new AtomicBoolean(true);
        CountDownLatch done = new CountDownLatch(1);
        Thread waiter = new Thread(() -> {
            try {
                lock.lockInterruptibly();
            } catch (Throwable t) {
                thrown.set(t);
            }
            flagAfter.set(Thread.currentThread().isInterrupted());
            done.countDown();
        });
        waiter.start();
        await("the waiter to wait", () -> waiter.getState() == Thread.State.WAITING
                || waiter.getState() == Thread.State.TIMED_WAITING);
        waiter.interrupt();
        assertThat(done.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(thrown.get()).isInstanceOf(InterruptedException.class);
        assertThat(flagAfter).as("cleared, as InterruptedException says").isFalse();
        lock.unlock();
        WardenLock elsewhere = registryOfAnotherProcess().obtain("foo");
        assertThat(elsewhere.tryLock()).as("nothing left held by the interrupted waiter").isTrue();
        elsewhere.unlock();
    }

    @Test
    void tryLockOnAnInterruptedThreadThrows() {
        WardenLock lock = newRegistry().obtain("foo");
        Thread.currentThread().interrupt();
        assertThatThrownBy(() -> lock.tryLock(1, TimeUnit.SECONDS)).isInstanceOf(InterruptedException.class);
        assertThat(Thread.interrupted()).isFalse();
        Thread.currentThread().interrupt();
        assertThat(lock.tryLock()).as("tryLock() answers anyway").isTrue();
        assertThat(Thread.interrupted()).as("and keeps the flag").isTrue();
        lock.unlock();
    }

    @Test
    void hugeWaitsAreAccepted() throws InterruptedException {
        WardenLock lock = newRegistry().obtain("foo");
        assertThat(lock.tryLock(Long.MAX_VALUE, TimeUnit.DAYS)).isTrue();
        assertThat(lock.tryLock(Duration.ofDays(365_000), Duration.ofDays(365_000))).isTrue();
        lock.unlock();
        lock.unlock();
    }

    @Test
    void keysAreNamesAfterThePrefix() {
        WardenLockRegistry registry = new WardenLockRegistry(client, "orders:");
        UUID id = UUID.randomUUID();
        assertThat(registry.obtain(42).name()).isEqualTo("orders:42");
        assertThat(registry.obtain(id).name()).isEqualTo("orders:" + id);
        assertThat(registry.obtain(42)).isSameAs(registry.obtain("42"));
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain(null));
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain("bad\u0001key"));
        assertThatIllegalArgumentException().isThrownBy(() -> registry.obtain("x".repeat(300)));
        assertThat(registry.cachedLocks()).containsOnlyKeys("orders:42", "orders:" + id);
    }

    @Test
    void registriesOverOneClientShareHolds() {
        WardenLockRegistry one = newRegistry();
        WardenLockRegistry two = newRegistry();
        WardenLock mine = one.obtain("foo");
        WardenLock again = two.obtain("foo");
        assertThat(again).isNotEqualTo(mine);
        mine.lock();
        try {
            assertThat(again.tryLock()).as("re-entered: one client, one thread").isTrue();
            assertThat(again.lease().fencingToken()).isEqualTo(mine.lease().fencingToken());
            assertThatNoException().isThrownBy(() -> two.obtain("foo").lease());
            again.unlock();
            assertThat(registryOfAnotherProcess().obtain("foo").tryLock()).isFalse();
        } finally {
            mine.unlock();
        }
        assertThat(client.admin().holder("foo")).isEmpty();
    }

    @Test
    void newConditionIsNotSupported() {
        assertThatThrownBy(() -> newRegistry().obtain("foo").newCondition())
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void executeLockedRunsUnderTheLease() throws Exception {
        WardenLockRegistry registry = newRegistry();
        long token = registry.executeLocked("foo", () -> {
            Lease lease = registry.obtain("foo").lease();
            assertThat(lease.isValid()).isTrue();
            return lease.fencingToken();
        });
        assertThat(token).isPositive();
        assertThat(registry.obtain("foo").isHeldByCurrentThread()).isFalse();
    }

    @Test
    void leaderInitiatorElectsOneLeaderAtATime() throws Exception {
        LockRegistryLeaderInitiator first = initiator(newRegistry());
        LockRegistryLeaderInitiator second = initiator(registryOfAnotherProcess());
        first.start();
        await("the first candidate to lead", () -> first.getContext().isLeader());
        second.start();
        try {
            assertThat(second.getContext().isLeader()).isFalse();
            first.stop();
            await("the first candidate to step down", () -> !first.getContext().isLeader());
            await("the second candidate to lead", () -> second.getContext().isLeader());
        } finally {
            first.destroy();
            second.destroy();
        }
    }

    private static LockRegistryLeaderInitiator initiator(WardenLockRegistry registry) {
        LockRegistryLeaderInitiator initiator = new LockRegistryLeaderInitiator(registry, new DefaultCandidate() {
            @Override
            public void onGranted(Context ctx) {
            }
        });
        initiator.setHeartBeatMillis(100);
        initiator.setBusyWaitMillis(20);
        return initiator;
    }
}
