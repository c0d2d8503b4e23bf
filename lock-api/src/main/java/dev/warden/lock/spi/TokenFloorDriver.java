package dev.warden.lock.spi;

import java.util.concurrent.CompletionStage;

/**
 * A driver whose tokens can be pushed up: while a grant holds a lock, every later grant of that lock
 * on this backend gets a token above a given floor. A migration between two backends needs it (each
 * migrating acquisition holds both locks and shows the larger of the two tokens; the floor carries
 * that token to the backend that gave the smaller one, so instances that use either backend alone
 * stay ordered after it). A driver without it cannot take part in a migration: lock-api refuses such
 * a configuration with {@code CONFIGURATION}. lock-api uses it when the driver is one; there is no flag.
 *
 * <p>A floor only ever rises, and the backend keeps it as long as it keeps the lock's tokens increasing.
 * Where the backend's tokens come from one counter for all locks (etcd's revision, ZooKeeper's zxid,
 * the memory store's counter), the floor is the namespace's: a stored base added to the counter, read in
 * the same step as the queue that grants, so raising it for one lock lifts every lock not taken since.
 * Redis keeps it per lock (its fence key: one lock's keys share a Cluster slot, a namespace's do not);
 * its tokens are its server's clock in microseconds, which outruns any other backend's counter.
 */
public interface TokenFloorDriver extends LockDriver {

    /**
     * While {@code grant} still holds its lock, makes every later grant of that lock on this backend
     * get a token above {@code floor} (and, where the floor is the namespace's, every later grant of any of
     * its locks). Never lowers a floor. Completes within the request timeout.
     *
     * @return true when the floor is in place; false when the lock was no longer this grant's (nothing
     *         was changed)
     */
    CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor);

    /**
     * Reserves the {@code count - 1} tokens above {@code grant}'s own for it (lease caching lends them to the
     * client's later acquisitions): while {@code grant} still holds its lock, makes every later grant of that
     * lock get a token above {@code grant.fencingToken() + count - 1}. By default the floor is raised to that
     * token. A backend whose tokens are a namespace floor plus a shared counter (etcd, ZooKeeper) overrides it
     * to raise the floor to the grant's own floor plus {@code count - 1}: a later grant's counter is above the
     * grant's, so that is enough, and the floor then grows by at most {@code count - 1} per reservation, not by
     * the counter each time. Completes within the request timeout.
     *
     * @return true when the tokens are reserved; false when the lock was no longer this grant's (nothing was
     *         changed)
     */
    default CompletionStage<Boolean> reserveTokens(Grant grant, int count) {
        return raiseTokenFloor(grant, grant.fencingToken() + count - 1);
    }
}
