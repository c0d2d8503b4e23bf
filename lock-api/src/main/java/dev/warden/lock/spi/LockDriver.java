package dev.warden.lock.spi;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * How one backend touches its server. The acquire loop, reentrancy, local queueing, lease keeping,
 * validity deadlines and listeners live once in lock-api and call these few methods. Every
 * returned stage completes (normally or exceptionally) within the configured request timeout.
 */
public interface LockDriver extends AutoCloseable {

    /**
     * Starts an attempt to take {@code name}.
     *
     * @param name the validated lock name (the driver applies the namespace and any encoding)
     * @param owner unique per acquisition; drivers store it so that only this acquisition can
     *        renew or release what it is granted
     */
    LockAttempt attempt(String name, String owner);

    /**
     * Compare-and-renew: extends the grant only if the server still holds it for this owner.
     *
     * @return true when renewed; false when the lock is gone or belongs to someone else
     */
    CompletionStage<Boolean> renew(Grant grant, Duration ttl);

    /**
     * Compare-and-delete: removes the lock only if it is still this grant's, and wakes waiters.
     *
     * @return true when it was removed; false when it was no longer this grant's
     */
    CompletionStage<Boolean> release(Grant grant);

    /**
     * Whether this driver can {@link #handOff hand a lock on} in one step. Drivers of queue-based
     * backends cannot: a new queue entry would go to the back, behind other clients' waiters.
     */
    default boolean handsOff() {
        return false;
    }

    /**
     * Releases {@code grant} and, in the same atomic step, grants the lock to {@code owner} with a
     * new, higher fencing token, so a contender waiting in this client takes over without another
     * round trip. When a contender outside this client is waiting, the driver only releases (and
     * wakes it), so hand-offs never shut other clients out.
     *
     * @throws UnsupportedOperationException when {@link #handsOff()} is false
     */
    default CompletionStage<HandOff> handOff(Grant grant, String owner, Duration ttl) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not hand locks on");
    }

    /**
     * Registers the one listener told when a session that carries grants is lost (etcd lease,
     * ZooKeeper session): every grant it carried is lost at once. Backends without sessions never
     * call it.
     */
    default void onSessionLost(Consumer<Throwable> listener) {
    }

    /** Closes connections. Grants still held are left to expire on the server. */
    @Override
    void close();
}
