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
        return acquireBlocking(0, false).orElseThrow();
    }

    @Override
    public Optional<Lease> tryAcquire(Duration wait) {
        Durations.requireNonNegative(wait, "wait");
        return acquireBlocking(Durations.toNanosSaturated(wait), true);
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

    private static CompletableFuture<Lease> leaseOf(Acquisition a) {
        CompletableFuture<Lease> lease = a.result.thenApply(LeaseHandle::new);
        // Cancelling the future the caller holds must reach the acquisition.
        lease.whenComplete((l, e) -> {
            if (lease.isCancelled() && !a.result.cancel(false) && !a.result.isCompletedExceptionally()) {
                // Granted as the caller cancelled: nobody will ever see this lease.
                a.result.join().releaseInBackground();
            }
        });
        return lease;
    }

    @Override
    public Lock asLock() {
        return new LockAdapter(this);
    }

    private Optional<Lease> acquireBlocking(long waitNanos, boolean bounded) {
        client.ensureOpen();
        HeldLock again = client.reenter(name);
        if (again != null) {
            return Optional.of(new LeaseHandle(again));
        }
        Acquisition a = client.startAcquisition(name, waitNanos, bounded, Thread.currentThread());
        try {
            return Optional.of(new LeaseHandle(a.result.get()));
        } catch (InterruptedException e) {
            a.stop(LockException.interrupted("interrupted while waiting for lock '" + name + "'", e));
            Thread.interrupted();
            awaitCleanUp(a);
            Thread.currentThread().interrupt();
            throw new LockException(LockException.Reason.INTERRUPTED,
                    "interrupted while waiting for lock '" + name + "'", e);
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

    /** Waits for a stopped acquisition to clean up; a grant that raced the stop is released. */
    private void awaitCleanUp(Acquisition a) {
        boolean interrupted = false;
        while (true) {
            try {
                HeldLock raced = a.result.get();
                new LeaseHandle(raced).release();
                break;
            } catch (InterruptedException again) {
                interrupted = true;
            } catch (ExecutionException stopped) {
                break;
            } catch (LockException releaseFailed) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
