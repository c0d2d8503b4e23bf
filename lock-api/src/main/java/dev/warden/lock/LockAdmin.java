package dev.warden.lock;

import java.util.List;
import java.util.Optional;

/**
 * What an operator does with holds of the client's namespace: see who holds a lock, and end a hold
 * that hangs. {@link LockClient#admin()}; thread-safe.
 *
 * <p>A forced release breaks the holder's lease by design: the evicted holder believes it holds the
 * lock until its next renewal (at most a third of the TTL later) tells it {@link LostReason#FORCED},
 * and a new holder may be granted meanwhile. Only fencing keeps the guarded resource right through
 * that window: the next grant's token exceeds the evicted one, so a resource that keeps the highest
 * token it saw refuses the evicted holder from the next holder's first write on.
 */
public interface LockAdmin {

    /**
     * A lock's holder as the server sees it now (on etcd and ZooKeeper, the first in its queue).
     *
     * @throws LockException {@code UNAVAILABLE} when the server cannot be read in time;
     *         {@code CONFIGURATION} when the backend's driver cannot read holders
     */
    Optional<Holding> holder(String name);

    /**
     * Every held lock of the client's namespace, sorted by name, read with bounded reads (see each
     * backend's cost in docs/locks.md); a lock taken or released while the listing runs may or may not be
     * in it. Allowed ten request timeouts.
     *
     * @throws LockException {@code UNAVAILABLE} when the server cannot be read in time;
     *         {@code CONFIGURATION} when the backend's driver cannot list holders
     */
    List<Holding> holders();

    /**
     * Ends the hold of {@code name} whose token is {@code token} (as {@link #holder} showed it), so an
     * operator never ends a newer hold than the one they saw. Audited: logged at WARN on the logger
     * {@code dev.warden.lock.audit} with the operator and the reason, and told to the client's
     * {@link LockObserver#forceReleased} (counted by warden-micrometer).
     *
     * @param operator who asks (a person or a tool), for the audit
     * @param why why, for the audit
     * @return true when that hold was ended; false when the lock was free or is held under another token
     * @throws IllegalArgumentException when {@code operator} or {@code why} is blank
     * @throws LockException {@code UNAVAILABLE} when the server cannot be reached in time;
     *         {@code CONFIGURATION} when the backend's driver cannot evict (the migrating step of a switch)
     */
    boolean forceRelease(String name, long token, String operator, String why);

    /**
     * A lock's holder.
     *
     * @param name the lock name
     * @param holderId the owner the grant was made out to: the holding client's id and acquisition, and for
     *        an election's leader its candidate id after {@code /}
     * @param token the hold's fencing token under this client's fencing epoch
     */
    record Holding(String name, String holderId, long token) {
    }
}
