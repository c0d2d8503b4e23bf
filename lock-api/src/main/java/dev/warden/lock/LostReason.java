package dev.warden.lock;

/** Why a lease stopped being valid before it was released. */
public enum LostReason {
    /** The lease's deadline passed without a successful renewal (server paused, holder cut off). */
    EXPIRED,
    /** A renewal found that the lock is no longer this lease's (deleted or taken by another owner). */
    NOT_OWNER,
    /** The backend session that carried the lease ended (etcd lease revoked, ZooKeeper session lost). */
    SESSION_LOST,
    /** The client was closed while the lease was held and the release could not be confirmed. */
    CLIENT_CLOSED,
    /**
     * The lease reached its maximum hold time ({@link DistributedLock#withMaxHoldTime}, setting
     * {@code warden.lock.max-hold-time}): renewal stopped and the lock was released on the server
     * for the next holder, whether or not the holder still works.
     */
    MAX_HOLD_TIME,
    /**
     * An operator force-released the lock ({@link LockAdmin#forceRelease}); told at the lease's next
     * renewal at the latest, and the next grant's token is higher, so a fenced resource refuses this
     * holder from the next holder's first write on.
     */
    FORCED
}
