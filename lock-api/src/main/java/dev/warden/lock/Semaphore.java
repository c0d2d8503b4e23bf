package dev.warden.lock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A counting semaphore by name: at most {@link #permits()} permits are held at once, across clients. Each
 * acquisition takes one or more permits and returns a {@link Lease} like a lock's: with its own fencing
 * token, renewed by the keeper, lost and told like a lock's lease, and released by
 * {@link Lease#release()}. Permits of a holder that dies come back when its lease expires on the server,
 * within the TTL.
 *
 * <p>Order: requests are granted in arrival order on the server. A request that does not fit (it asks
 * for more permits than are free) holds back every later request, so a request for many permits is not
 * starved by a stream of requests for few.
 *
 * <p>The permit count is not stored on the server: the server keeps only the holders and waiters, each
 * with the permits it asked for and the count its client was configured with, and each request is judged
 * by its own count. Two clients configured with different counts therefore disagree without error: a
 * request under 3 waits while 3 permits are held or asked for ahead of it, one under 5 enters while fewer
 * than 5 are; so configure one count per name.
 *
 * <p>Permits are not reentrant: a thread that holds one and asks again takes another. A request for more
 * permits than the count fails at once with {@link IllegalArgumentException}.
 */
public interface Semaphore {

    /** The name, as given. */
    String name();

    /** The permit count this semaphore was configured with. */
    int permits();

    /** One permit, waiting as long as it takes; the failures are a lock's ({@link DistributedLock#acquire()}). */
    Lease acquire();

    /** {@code permits} permits at once, waiting as long as it takes. */
    Lease acquire(int permits);

    /** One permit, waiting at most {@code wait}; empty when the wait ran out. */
    Optional<Lease> tryAcquire(Duration wait);

    /** {@code permits} permits at once, waiting at most {@code wait}; empty when the wait ran out. */
    Optional<Lease> tryAcquire(int permits, Duration wait);

    /** {@code permits} permits without blocking; cancelling the future leaves nothing held. */
    CompletableFuture<Lease> acquireAsync(int permits);

    /** Like {@link #acquireAsync(int)}, failing with {@link LockException.Reason#TIMEOUT} when the wait runs out. */
    CompletableFuture<Lease> acquireAsync(int permits, Duration wait);

    /** The same semaphore whose leases are held at most {@code maxHoldTime} ({@link DistributedLock#withMaxHoldTime}). */
    Semaphore withMaxHoldTime(Duration maxHoldTime);
}
