package dev.warden.shedlock;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.shedlock.internal.Hold;
import dev.warden.shedlock.internal.WardenSimpleLock;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * A ShedLock {@link ExtensibleLockProvider} over a Warden {@link LockClient}: the backend (Redis, etcd,
 * ZooKeeper, memory) is whatever the client was configured with, and a ShedLock lock {@code x} is the Warden
 * lock {@code x} in the client's namespace (operators see it with {@code LockClient.admin()} and the CLI).
 *
 * <ul>
 *   <li>{@link #lock} tries once, without waiting: the lock is granted, or it is held elsewhere (also by
 *       another thread of this process) and the result is empty. A lock is never re-entered: a second
 *       {@code lock} of a held name on the same thread is empty too, as ShedLock expects (its
 *       {@code LockingTaskExecutor} runs a nested task of the same name without asking the provider).
 *       A {@code lockAtMostUntil} already past gives empty.</li>
 *   <li>{@code lockAtMostFor} is the lease's maximum hold time, counted from the grant
 *       ({@link DistributedLock#withMaxHoldTime}): when it passes, the lease keeper releases the lock and
 *       the lease reads lost ({@code MAX_HOLD_TIME}), whether or not the task still runs. Until then the
 *       keeper renews the lease every third of Warden's TTL, so a node that dies frees its locks after the
 *       TTL ({@code warden.lock.ttl}), not at {@code lockAtMostUntil}.</li>
 *   <li>{@link SimpleLock#unlock()} before {@code lockAtLeastUntil} leaves the lock held, and renewed, until
 *       then ({@link Lease#releaseAfter}), never past the maximum hold time's end; after it, releases at
 *       once. A release the server does not confirm is logged, not thrown: the lock then expires within its
 *       TTL.</li>
 *   <li>{@link SimpleLock#extend} moves the maximum hold time to the new {@code lockAtMostFor} from now
 *       ({@link Lease#setMaxHoldTime}) and returns a new lock carrying the new {@code lockAtLeastFor}; a lease
 *       no longer valid, or past its {@code lockAtMostUntil}, is released and the result is empty.</li>
 *   <li>A lock that was unlocked or extended is spent: {@code unlock} or {@code extend} on it again throws
 *       {@link IllegalStateException}, whatever the thread.</li>
 *   <li>The task reads its lease through {@link ShedLockLease}.</li>
 * </ul>
 *
 * <p>Times: {@code lockAtMostUntil} and {@code lockAtLeastUntil} are turned into durations on ShedLock's
 * {@link ClockProvider} clock when {@code lock}, {@code extend} and {@code unlock} run; after that only the
 * holder's monotonic clock and the server's TTL count, so the clocks of other nodes never matter.
 *
 * <p>Failures: {@code lock} throws {@link LockException} when the backend cannot be reached
 * ({@code UNAVAILABLE}), the client is closed ({@code CLOSED}) or the thread is interrupted
 * ({@code INTERRUPTED}, flag restored); nothing is left held in each case. A lock name Warden refuses
 * (empty, over 256 bytes of UTF-8, control characters) is an {@link IllegalArgumentException}.
 *
 * <p>The provider does not own the client: close the client when the scheduler is done with it (closing it
 * releases every lock still held, those waiting out their {@code lockAtLeastFor} included). Thread-safe.
 */
public final class WardenLockProvider implements ExtensibleLockProvider {

    private final LockClient client;

    /** A provider taking its locks from {@code client}, in the client's namespace. */
    public WardenLockProvider(LockClient client) {
        this.client = Objects.requireNonNull(client, "client");
    }

    @Override
    public Optional<SimpleLock> lock(LockConfiguration lockConfiguration) {
        Objects.requireNonNull(lockConfiguration, "lockConfiguration");
        Duration atMost = Duration.between(ClockProvider.now(), lockConfiguration.getLockAtMostUntil());
        if (atMost.isNegative() || atMost.isZero()) {
            return Optional.empty();
        }
        DistributedLock lock = client.lock(lockConfiguration.getName()).withMaxHoldTime(atMost);
        // The hold can end no earlier than this: the keeper counts the limit from the grant, which comes later.
        long holdEndsNoEarlierThan = Hold.nanosFromNow(atMost);
        return tryOnce(lock).map(lease -> new WardenSimpleLock(Hold.bind(lease, holdEndsNoEarlierThan),
                lockConfiguration));
    }

    /**
     * One try, without waiting and without re-entering: an asynchronous acquisition, unlike a blocking one,
     * never joins a hold of the calling thread, so a name this process holds (a lock waiting out its
     * {@code lockAtLeastFor} included) is refused locally, without a server call.
     */
    private static Optional<Lease> tryOnce(DistributedLock lock) {
        CompletableFuture<Lease> acquisition = lock.acquireAsync(Duration.ZERO);
        try {
            return Optional.of(acquisition.get());
        } catch (InterruptedException e) {
            // Cancelling leaves nothing held: a grant that races the cancel is released by Warden.
            acquisition.cancel(false);
            throw LockException.interrupted("interrupted while trying lock '" + lock.name() + "'", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockException failed) {
                if (failed.reason() == LockException.Reason.TIMEOUT) {
                    return Optional.empty();
                }
                throw new LockException(failed.reason(), failed.getMessage(), failed);
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "lock '" + lock.name()
                    + "' could not be acquired", e.getCause());
        }
    }

    @Override
    public String toString() {
        return "WardenLockProvider[" + client.backend() + "]";
    }
}
