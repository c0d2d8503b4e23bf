package dev.warden.lock.internal;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockException;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.locks.Lock;

/** A lock name bound to a client; cheap, holds no state of its own. */
final class DefaultLock implements DistributedLock {

    private final DefaultLockClient client;
    private final String name;

    DefaultLock(DefaultLockClient client, String name) {
        this.client = client;
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Lease acquire() {
        return acquireBlocking(0, false, true).orElseThrow();
    }

    @Override
    public Optional<Lease> tryAcquire(Duration wait) {
        Durations.requireNonNegative(wait, "wait");
        return acquireBlocking(Durations.toNanosSaturated(wait), true, true);
    }

    @Override
    public CompletableFuture<Lease> acquireAsync() {
        return leaseOf(client.startAcquisition(name, 0, false, null));
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(Duration wait) {
        Durations.requireNonNegative(wait, "wait");
        return leaseOf(client.startAcquisition(name, Durations.toNanosSaturated(wait), true, null));
    }

    private CompletableFuture<Lease> leaseOf(Acquisition a) {
        // Continuations of the caller's future run on Warden's callback threads, never a driver's.
        CompletableFuture<Lease> lease = a.result.thenApplyAsync(LeaseHandle::new, client.callbacks());
        // However the caller's future ends early (cancel, orTimeout, completeExceptionally), the
        // acquisition must stop, or a grant that arrives later is held with nobody to release it.
        lease.whenComplete((l, e) -> {
            if (e != null && !a.result.cancel(false) && !a.result.isCompletedExceptionally()) {
                a.result.join().releaseInBackground(false);
            }
        });
        return lease;
    }

    @Override
    public Lock asLock() {
        return new LockAdapter(this, client);
    }

    /**
     * @param interruptible whether an interrupt abandons the wait ({@link Lock#lock()} and
     *        {@link Lock#tryLock()} must not be interrupted; they restore the flag afterwards)
     */
    Optional<Lease> acquireBlocking(long waitNanos, boolean bounded, boolean interruptible) {
        client.ensureOpen();
        HeldLock again = client.reenter(name);
        if (again != null) {
            return Optional.of(new LeaseHandle(again));
        }
        Acquisition a = client.startAcquisition(name, waitNanos, bounded, Thread.currentThread());
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return Optional.of(new LeaseHandle(a.result.get()));
                } catch (InterruptedException e) {
                    if (!interruptible) {
                        interrupted = true;
                        continue;
                    }
                    a.stop(new LockException(LockException.Reason.INTERRUPTED,
                            "interrupted while waiting for lock '" + name + "'", e));
                    awaitCleanUp(a);
                    throw LockException.interrupted("interrupted while waiting for lock '" + name + "'", e);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof LockException le) {
                        if (le.reason() == LockException.Reason.TIMEOUT) {
                            return Optional.empty();
                        }
                        throw new LockException(le.reason(), le.getMessage(), le);
                    }
                    throw new LockException(LockException.Reason.UNAVAILABLE, "lock '" + name + "' could not be acquired",
                            e.getCause());
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits for a stopped acquisition to clean up; a grant that raced the stop is released. */
    private void awaitCleanUp(Acquisition a) {
        boolean interrupted = false;
        while (true) {
            try {
                a.result.get().releaseInBackground(false);
                break;
            } catch (InterruptedException again) {
                interrupted = true;
            } catch (ExecutionException stopped) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
