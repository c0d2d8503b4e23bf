package dev.warden.lock.spi;

import java.util.concurrent.CompletionStage;

/**
 * A driver through which an operator can end a hold: a compare-and-delete of a lock's holder by its
 * token, which leaves a mark the evicted holder's next renewal reads, so its lease is told
 * {@code FORCED} rather than {@code NOT_OWNER}. Every bundled driver except the migrating step's is
 * one; lock-api's {@code LockAdmin.forceRelease} fails with {@code CONFIGURATION} on a driver that is not.
 */
public interface HolderEvictingDriver extends HolderReadingDriver {

    /**
     * Removes the holder of {@code name} if its token (as {@link #holder} reads it) is {@code token},
     * wakes the waiters as a release does, and marks the grant evicted for at least twice the
     * configured TTL (its holder renews within a third of it). Completes within the request timeout.
     *
     * @return true when that holder was removed; false when the lock was free or held by another grant
     */
    CompletionStage<Boolean> evict(String name, long token);

    /**
     * Whether {@code grant}, which a renewal just found gone, was evicted: read only on that rare path.
     */
    CompletionStage<Boolean> evicted(Grant grant);
}
