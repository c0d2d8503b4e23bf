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
}
