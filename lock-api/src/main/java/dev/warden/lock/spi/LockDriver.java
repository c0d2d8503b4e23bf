package dev.warden.lock.spi;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * How one backend touches its server. The acquire loop, reentrancy, local queueing, lease keeping,
 * validity deadlines and listeners live once in lock-api and call these few methods. Every
 * returned stage completes (normally or exceptionally) within the configured request timeout.
 *
 * <p>Failures: a stage that fails with a {@link dev.warden.lock.LockException} of reason
 * {@code UNAVAILABLE} (or with an {@link java.io.IOException} or a
 * {@link java.util.concurrent.TimeoutException}) says the server could not be reached or did not
 * answer; lock-api's acquire loop then abandons the attempt and starts a new one after a backoff,
 * until the caller's wait or the configured outage tolerance runs out. Anything else
 * ({@code PROTOCOL}, {@code CLOSED}, an unexpected exception) ends the acquisition at once.
 *
 * <p>A driver that can also hand a lock on in one step implements {@link HandOffDriver}.
 */
public interface LockDriver extends AutoCloseable {

    /**
     * Starts an attempt to take {@code name}.
     *
     * @param name the validated lock name (the driver applies the namespace and any encoding)
     * @param owner unique per acquisition (the attempts one acquisition starts after failed calls
     *        share it, one at a time); drivers store it so that only this acquisition can renew or
     *        release what it is granted
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
