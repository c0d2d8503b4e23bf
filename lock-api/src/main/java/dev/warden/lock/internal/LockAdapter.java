package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * {@link Lock} over a distributed lock. Holds belong to threads, as that interface requires, and
 * are kept by the client's registry per name, so every view of one lock agrees on who holds it.
 * Immutable.
 */
final class LockAdapter implements Lock {

    private final DefaultLock lock;
    private final Registry registry;

    LockAdapter(DefaultLock lock, Registry registry) {
        this.lock = lock;
        this.registry = registry;
    }

    @Override
    public void lock() {
        push(lock.acquireBlocking(Wait.FOREVER, OnInterrupt.KEEP_WAITING).orElseThrow());
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            push(lock.acquire());
        } catch (LockException e) {
            throw asInterrupted(e);
        }
    }

    @Override
    public boolean tryLock() {
        return offer(lock.acquireBlocking(Wait.upTo(Duration.ZERO), OnInterrupt.KEEP_WAITING));
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return offer(lock.tryAcquire(Duration.ofNanos(unit.toNanos(Math.max(0, time)))));
        } catch (LockException e) {
            throw asInterrupted(e);
        }
    }

    /**
     * @throws IllegalMonitorStateException when the current thread holds no hold of this lock
     * @throws LockException {@code LOST} when the hold's lease had been lost: the hold is gone, but
     *         the critical section was not protected to its end; {@code UNAVAILABLE} when the server
     *         did not confirm the release
     */
    @Override
    public void unlock() {
        Lease lease = registry.takeLockViewHold(lock.holdKey());
        if (lease == null) {
            throw new IllegalMonitorStateException("the current thread does not hold lock '" + lock.name() + "'");
        }
        if (lease.release() == ReleaseOutcome.LOST) {
            String why = lease instanceof LeaseHandle h ? h.lost().map(l -> " (" + l.reason() + ", last valid at "
                    + l.lastValidAt() + ")").orElse("") : "";
            throw new LockException(LockException.Reason.LOST, "lock '" + lock.name() + "' (token " + lease.fencingToken()
                    + ") had been lost before unlock()" + why + ": the critical section was not protected to its end");
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("distributed locks do not support conditions");
    }

    private boolean offer(Optional<Lease> lease) {
        lease.ifPresent(this::push);
        return lease.isPresent();
    }

    private void push(Lease lease) {
        registry.lockViewHolds(lock.holdKey()).push(lease);
    }

    private static InterruptedException asInterrupted(LockException e) throws LockException {
        if (e.reason() != LockException.Reason.INTERRUPTED) {
            throw e;
        }
        Thread.interrupted();
        InterruptedException ie = new InterruptedException(e.getMessage());
        ie.initCause(e);
        return ie;
    }
}
