package dev.warden.lock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;

/**
 * A named lock. Within one JVM, contenders for one name queue locally and only the head of the
 * queue talks to the server.
 *
 * <p>Blocking acquisitions are reentrant per thread: the same thread acquiring again gets a new
 * lease object sharing the same lock and token, and the server lock is released when every hold
 * has been released. Asynchronous acquisitions are never reentrant: they queue like any other
 * contender.
 */
public interface DistributedLock {

    /** The lock name, as given. */
    String name();

    /**
     * Waits as long as it takes.
     *
     * @throws LockException {@code INTERRUPTED} (interrupt flag restored), {@code UNAVAILABLE},
     *         {@code CLOSED}; in each case nothing is left held on the server
     */
    Lease acquire();

    /**
     * Waits at most {@code wait}; zero tries once without waiting.
     *
     * @return the lease, or empty when the wait ran out
     * @throws IllegalArgumentException when {@code wait} is negative
     */
    Optional<Lease> tryAcquire(Duration wait);

    /**
     * Acquires without blocking the caller. Cancelling the returned future abandons the attempt
     * and leaves nothing held on the server.
     */
    CompletableFuture<Lease> acquireAsync();

    /**
     * Like {@link #acquireAsync()}, completing exceptionally with {@link LockException.Reason#TIMEOUT}
     * when the wait runs out.
     */
    CompletableFuture<Lease> acquireAsync(Duration wait);

    /**
     * This lock as a {@link Lock}, for code written against {@code java.util.concurrent}. Its
     * holds belong to the calling thread, as the {@link Lock} contract says; {@code unlock()} by a
     * thread that does not hold it throws {@link IllegalMonitorStateException}, and {@code unlock()}
     * of a hold whose lease was lost meanwhile removes the hold and throws {@link LockException}
     * with reason {@link LockException.Reason#LOST}, so code written against {@link Lock} learns
     * that its critical section was not protected to its end. Conditions are not supported.
     */
    Lock asLock();

    /**
     * The same lock, whose acquisitions are held at most {@code maxHoldTime}: then the lease keeper
     * stops renewing, releases the lock on the server and reports the lease lost with
     * {@link LostReason#MAX_HOLD_TIME}, for holders that hang (Redisson's "lease time"). Counted from
     * the grant. A reentrant acquisition joins the hold it re-enters and keeps that hold's limit.
     * Replaces the client's default ({@code warden.lock.max-hold-time}).
     *
     * @throws IllegalArgumentException when {@code maxHoldTime} is null, zero or negative
     */
    DistributedLock withMaxHoldTime(Duration maxHoldTime);
}
