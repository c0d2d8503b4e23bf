package dev.warden.integration.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;

import java.time.Duration;

/**
 * One grant of a lock as one thread of a registry holds it: the holds that share its lease (a thread's reentrant
 * holds, one fencing token) share this. Keeps the read-only view of the lease, the maximum hold time last set
 * through the registry (what {@code renewLock(key)} sets again), and how the lease was lost, once it was.
 * Concurrency: {@code limit} is written by the holding thread only; {@code lost} by Warden's event thread; both
 * are volatile.
 */
final class Grant {

    /**
     * The longest maximum hold time handed to {@link Lease#setMaxHoldTime}: about 73 years. lock-api's
     * {@code setMaxHoldTime} converts to nanoseconds without saturating, so a longer one would overflow there.
     */
    private static final Duration LONGEST = Duration.ofNanos(Long.MAX_VALUE / 4);

    private final long token;
    private final Lease view;
    private volatile Duration limit;
    private volatile LeaseLost lost;

    private Grant(Lease lease, Duration limit) {
        this.token = lease.fencingToken();
        this.view = new ReadOnlyLease(lease);
        this.limit = limit;
    }

    /** A grant seen for the first time on this thread; one loss listener per grant, never per hold. */
    static Grant of(Lease lease, Duration limit) {
        Grant grant = new Grant(lease, limit);
        lease.onLost(lost -> grant.lost = lost);
        return grant;
    }

    /**
     * Moves the maximum hold time of {@code lease} (this grant's) to {@code fromNow} from now, capped at
     * {@link #LONGEST}, and remembers it for {@code renewLock(key)}.
     *
     * @return false when the lease is no longer held
     */
    boolean limit(Lease lease, Duration fromNow) {
        boolean held = lease.setMaxHoldTime(fromNow.compareTo(LONGEST) > 0 ? LONGEST : fromNow);
        this.limit = fromNow;
        return held;
    }

    long token() {
        return token;
    }

    Lease view() {
        return view;
    }

    /** The maximum hold time last set through the registry; null when none was. */
    Duration limit() {
        return limit;
    }

    /** Why the lease was lost, for messages; empty when not lost or not told yet. */
    String lossDetail() {
        LeaseLost l = lost;
        return l == null ? "" : " (" + l.reason() + ", last valid at " + l.lastValidAt() + ")";
    }
}
