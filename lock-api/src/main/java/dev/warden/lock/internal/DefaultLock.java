package dev.warden.lock.internal;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import dev.warden.lock.internal.config.Durations;
import dev.warden.lock.spi.Share;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.Lock;

/**
 * A lock name bound to a client, with its maximum hold time; or one side of a read-write lock, or a
 * semaphore's request for some permits, when it carries a {@link Share}. Cheap, immutable, holds no
 * state of its own.
 */
final class DefaultLock implements DistributedLock {

    private final DefaultLockClient client;
    private final ClientParts parts;
    private final String name;
    private final Optional<Duration> maxHoldTime;
    /** What of the shared name {@code name} is asked for; null for a lock. */
    private final Share share;
    /** Whether a blocking acquisition by a thread that already holds joins its hold (semaphores: no). */
    private final boolean reentrant;

    DefaultLock(DefaultLockClient client, ClientParts parts, String name, Optional<Duration> maxHoldTime) {
        this(client, parts, name, maxHoldTime, null, true);
    }

    DefaultLock(DefaultLockClient client, ClientParts parts, String name, Optional<Duration> maxHoldTime, Share share,
                boolean reentrant) {
        this.client = client;
        this.parts = parts;
        this.name = name;
        this.maxHoldTime = maxHoldTime;
        this.share = share;
        this.reentrant = reentrant;
    }

    /** The key this lock's holds are kept under per thread. */
    String holdKey() {
        return HoldKeys.of(name, share);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Lease acquire() {
        return acquireBlocking(Wait.FOREVER, OnInterrupt.GIVE_UP).orElseThrow();
    }

    @Override
    public Optional<Lease> tryAcquire(Duration wait) {
        Durations.requireNonNegative(wait, "wait");
        return acquireBlocking(Wait.upTo(wait), OnInterrupt.GIVE_UP);
    }

    @Override
    public CompletableFuture<Lease> acquireAsync() {
        return leaseOf(client.startAcquisition(name, Wait.FOREVER, maxHoldTime, null, "", share), parts.leaks().site());
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration wait) {
        Durations.requireNonNegative(wait, "wait");
        return leaseOf(client.startAcquisition(name, Wait.upTo(wait), maxHoldTime, null, "", share), parts.leaks().site());
    }

    /**
     * An asynchronous acquisition without limit whose owner ends in {@code ownerSuffix}: an election's
     * campaign, whose candidate id observers read from the holder's owner.
     */
    CompletableFuture<Lease> acquireAsOwner(String ownerSuffix) {
        return leaseOf(client.startAcquisition(name, Wait.FOREVER, maxHoldTime, null, ownerSuffix, share), parts.leaks().site());
    }

    @Override
    public DistributedLock withMaxHoldTime(Duration maxHoldTime) {
        if (maxHoldTime == null || maxHoldTime.isNegative() || maxHoldTime.isZero()) {
            throw new IllegalArgumentException("maxHoldTime must be positive, was " + maxHoldTime);
        }
        return new DefaultLock(client, parts, name, Optional.of(maxHoldTime), share, reentrant);
    }

    private CompletableFuture<Lease> leaseOf(Acquisition a, LeakDetector.AcquiredAt at) {
        // Continuations of the caller's future run on Warden's callback threads, never a driver's, whichever way it
        // ends: handleAsync hops for a failure too (thenApplyAsync passes a failure on where it happened, which may
        // be the driver's thread a continuation's blocking call would wait on).
        CompletableFuture<Lease> lease = a.result.handleAsync((h, e) -> {
            if (e != null) {
                throw e instanceof CompletionException c ? c : new CompletionException(e);
            }
            return new LeaseHandle(h, at);
        }, parts.callbacks());
        // However the caller's future ends early (cancel, orTimeout, completeExceptionally), the
        // acquisition must stop, or a grant that arrives later is held with nobody to release it.
        lease.whenComplete((l, e) -> {
            if (e != null && !a.result.cancel(false) && !a.result.isCompletedExceptionally()) {
                Release.inBackground(a.result.join(), HeldLock.Releaser.HOLDER);
            }
        });
        return lease;
    }

    @Override
    public Lock asLock() {
        return new LockAdapter(this, parts.registry());
    }

    @Override
    public String toString() {
        return "DistributedLock[" + holdKey() + maxHoldTime.map(d -> ", max hold " + d).orElse("") + "]";
    }

    /** Acquires on the calling thread, re-entering a lock it already holds. */
    Optional<Lease> acquireBlocking(Wait wait, OnInterrupt onInterrupt) {
        parts.registry().ensureOpen();
        LeakDetector.AcquiredAt at = parts.leaks().site();
        if (reentrant) {
            HeldLock again = parts.registry().reenter(holdKey());
            if (again != null) {
                return Optional.of(new LeaseHandle(again, at));
            }
            refuseSelfDeadlock();
        }
        Acquisition a = client.startAcquisition(name, wait, maxHoldTime, reentrant ? Thread.currentThread() : null, "",
                share);
        try {
            HeldLock held = onInterrupt == OnInterrupt.GIVE_UP ? a.result.get() : Await.uninterruptibly(a.result);
            return Optional.of(new LeaseHandle(held, at));
        } catch (InterruptedException e) {
            a.stop(new LockException(LockException.Reason.INTERRUPTED, "interrupted while waiting for lock '" + name + "'", e));
            awaitCleanUp(a);
            throw LockException.interrupted("interrupted while waiting for lock '" + name + "'", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockException le) {
                if (le.reason() == LockException.Reason.TIMEOUT) {
                    return Optional.empty();
                }
                throw new LockException(le.reason(), le.getMessage(), le);
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "lock '" + name + "' could not be acquired", e.getCause());
        }
    }

    /**
     * A thread that holds one side of a read-write lock and asks for the other would queue behind its own
     * hold and wait forever: refused, as neither upgrade nor downgrade can be granted in arrival order.
     */
    private void refuseSelfDeadlock() {
        if (Share.READ.equals(share) || Share.WRITE.equals(share)) {
            Share other = Share.READ.equals(share) ? Share.WRITE : Share.READ;
            if (parts.registry().holdsOnThisThread(HoldKeys.of(name, other))) {
                throw new IllegalStateException("this thread holds the " + (other == Share.READ ? "read" : "write")
                        + " lock of '" + name + "'; taking its " + (other == Share.READ ? "write" : "read")
                        + " lock as well would wait for itself: release it first");
            }
        }
    }

    /** Waits for a stopped acquisition to clean up; a grant that raced the stop is released. */
    private static void awaitCleanUp(Acquisition a) {
        try {
            Release.inBackground(Await.uninterruptibly(a.result), HeldLock.Releaser.HOLDER);
        } catch (ExecutionException stopped) {
            // Cleaned up: nothing is held.
        }
    }
}
