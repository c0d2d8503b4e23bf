package dev.warden.lock.spi;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A driver that can say who holds a lock without taking part in it: what an election's observers and
 * an operator's listing read. Every bundled driver is one; lock-api uses it when the driver is one, and
 * {@code Election.leader()} fails with {@code CONFIGURATION} on a driver that is not.
 */
public interface HolderReadingDriver extends LockDriver {

    /**
     * The holder of {@code name} as the server sees it now, one read (or one transaction) with no
     * side effect. On a queue backend (etcd, ZooKeeper) it is the first contender in the queue: the
     * holder, or the waiter the server has already made the next one, which learns it at its next
     * read. Completes within the request timeout.
     */
    CompletionStage<Optional<Holder>> holder(String name);

    /**
     * A lock's holder as stored on the server.
     *
     * @param owner the owner the grant was made out to (what lock-api passed to {@link LockDriver#attempt})
     * @param token the grant's fencing token as the backend counts it (lock-api adds the epoch)
     */
    record Holder(String owner, long token) {
    }
}
