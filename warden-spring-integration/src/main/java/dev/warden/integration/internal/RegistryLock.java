package dev.warden.integration.internal;

import dev.warden.integration.WardenLock;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.DataAccessResourceFailureException;

import java.time.Duration;
import java.util.ConcurrentModificationException;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.function.Supplier;

/**
 * A {@link WardenLock} over one Warden lock: acquisitions through Warden's blocking, reentrant
 * {@link DistributedLock#acquire()} and {@link DistributedLock#tryAcquire}, each returning its own lease, kept as a
 * hold of the current thread in the registry's {@link LockTable} until the matching {@link #unlock()} releases it.
 * Its own state is only when it was last used; equal to every lock of the same table and name.
 */
final class RegistryLock implements WardenLock {

    private final LockTable table;
    private final String name;
    private final DistributedLock lock;
    private volatile long lastUsed = System.nanoTime();

    RegistryLock(LockTable table, String name, DistributedLock lock) {
        this.table = table;
        this.name = name;
        this.lock = lock;
    }

    @Override
    public String name() {
        return name;
    }

    long lastUsed() {
        return lastUsed;
    }

    void touch() {
        lastUsed = System.nanoTime();
    }

    @Override
    public void lock() {
        held(acquireUninterruptibly(() -> Optional.of(lock.acquire())).orElseThrow(), null);
    }

    @Override
    public void lock(Duration ttl) {
        DistributedLock limited = limited(ttl);
        held(acquireUninterruptibly(() -> Optional.of(limited.acquire())).orElseThrow(), ttl);
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            held(lock.acquire(), null);
        } catch (LockException e) {
            throw interruptedOrCannotAcquire(e);
        }
    }

    @Override
    public boolean tryLock() {
        return offer(acquireUninterruptibly(() -> lock.tryAcquire(Duration.ZERO)), null);
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        return tryLock(lock, Duration.ofNanos(unit.toNanos(Math.max(0, time))), null);
    }

    @Override
    public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
        Objects.requireNonNull(waitTime, "waitTime");
        return tryLock(limited(ttl), waitTime.isNegative() ? Duration.ZERO : waitTime, ttl);
    }

    /**
     * Releases the current thread's newest hold.
     *
     * @throws IllegalMonitorStateException when the current thread holds none
     * @throws ConcurrentModificationException when the hold's lease had been lost: the hold is gone, but the critical
     *         section was not protected to its end; its cause is Warden's {@code LockException} ({@code LOST})
     * @throws DataAccessResourceFailureException when the server did not confirm the release: the hold is gone and
     *         the lock expires within its TTL
     */
    @Override
    public void unlock() {
        Hold hold = table.pop(name);
        if (hold == null) {
            throw notOwner(name);
        }
        touch();
        ReleaseOutcome outcome;
        try {
            outcome = hold.lease().release();
        } catch (LockException e) {
            throw new DataAccessResourceFailureException("Failed to release lock '" + name + "' (token "
                    + hold.grant().token() + "): " + e.getMessage(), e);
        }
        if (outcome == ReleaseOutcome.LOST) {
            String message = "Lock '" + name + "' (token " + hold.grant().token() + ") had been lost before unlock()"
                    + hold.grant().lossDetail() + ": the critical section was not protected to its end";
            throw new ConcurrentModificationException(message, new LockException(LockException.Reason.LOST, message));
        }
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("Conditions are not supported by distributed locks");
    }

    @Override
    public boolean isHeldByCurrentThread() {
        return table.newest(name) != null;
    }

    @Override
    public Lease lease() {
        Hold hold = table.newest(name);
        if (hold == null) {
            throw notOwner(name);
        }
        return hold.grant().view();
    }

    static IllegalMonitorStateException notOwner(String name) {
        return new IllegalMonitorStateException("The current thread does not own lock '" + name + "'");
    }

    private DistributedLock limited(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        return lock.withMaxHoldTime(ttl);
    }

    private boolean tryLock(DistributedLock from, Duration wait, Duration ttl) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return offer(from.tryAcquire(wait), ttl);
        } catch (LockException e) {
            throw interruptedOrCannotAcquire(e);
        }
    }

    /**
     * Runs {@code attempt} whatever interrupts come: each one ends the attempt it hits (Warden leaves nothing held)
     * and a new attempt starts; the interrupt flag is set again on the way out.
     */
    private Optional<Lease> acquireUninterruptibly(Supplier<Optional<Lease>> attempt) {
        boolean interrupted = Thread.interrupted();
        try {
            while (true) {
                try {
                    return attempt.get();
                } catch (LockException e) {
                    if (e.reason() != LockException.Reason.INTERRUPTED) {
                        throw cannotAcquire(e);
                    }
                    Thread.interrupted();
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private boolean offer(Optional<Lease> lease, Duration ttl) {
        lease.ifPresent(l -> held(l, ttl));
        return lease.isPresent();
    }

    /**
     * Records a new hold of the current thread. A hold that re-enters the thread's newest grant shares its
     * {@link Grant}; with a {@code ttl} the grant's limit moves to {@code ttl} from now (a reentrant acquisition
     * otherwise keeps the limit of the hold it joins).
     */
    private void held(Lease lease, Duration ttl) {
        Hold newest = table.newest(name);
        Grant grant;
        if (newest != null && newest.grant().token() == lease.fencingToken()) {
            grant = newest.grant();
        } else {
            grant = Grant.of(lease, ttl);
        }
        if (ttl != null) {
            grant.limit(lease, ttl);
        }
        table.push(name, new Hold(lease, grant));
        touch();
    }

    private CannotAcquireLockException cannotAcquire(LockException e) {
        return new CannotAcquireLockException("Failed to lock '" + name + "' (" + e.reason() + "): " + e.getMessage(), e);
    }

    private RuntimeException interruptedOrCannotAcquire(LockException e) throws InterruptedException {
        if (e.reason() != LockException.Reason.INTERRUPTED) {
            throw cannotAcquire(e);
        }
        Thread.interrupted();
        InterruptedException ie = new InterruptedException("interrupted while waiting for lock '" + name + "'");
        ie.initCause(e);
        throw ie;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RegistryLock other && other.table == table && other.name.equals(name);
    }

    @Override
    public int hashCode() {
        return System.identityHashCode(table) * 31 + name.hashCode();
    }

    @Override
    public String toString() {
        return "WardenLock[" + name + "]";
    }
}
