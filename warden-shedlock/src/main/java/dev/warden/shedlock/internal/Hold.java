package dev.warden.shedlock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One grant behind a ShedLock lock and the locks its extensions return: the Warden lease, the read-only view
 * the task sees, the earliest moment its maximum hold time can end, and its binding to the thread that took
 * it. Concurrency: the binding flag is atomic and the hold end volatile; the rest is final.
 */
public final class Hold {

    private static final Logger log = LoggerFactory.getLogger(Hold.class);

    /** Far enough for any limit, near enough that adding it to a nanoTime never overflows. */
    private static final long LONGEST_NANOS = Long.MAX_VALUE / 4;

    private final Lease lease;
    private final Lease view;
    private final AtomicBoolean bound = new AtomicBoolean(true);
    /** How far past a delayed release the maximum hold time is moved when the task ends ({@link #releaseLater}). */
    static final Duration RELEASE_BACKSTOP = Duration.ofMillis(500);
    /** On {@link System#nanoTime()}'s scale: the keeper's maximum hold time ends here or later. */
    private volatile long holdEndsNoEarlierThan;

    private Hold(Lease lease, long holdEndsNoEarlierThan) {
        this.lease = lease;
        this.view = new ReadOnlyLease(lease);
        this.holdEndsNoEarlierThan = holdEndsNoEarlierThan;
    }

    /** A new hold of {@code lease}, bound to the calling thread until it is unbound. */
    public static Hold bind(Lease lease, long holdEndsNoEarlierThan) {
        Hold hold = new Hold(lease, holdEndsNoEarlierThan);
        ThreadHolds.push(hold);
        return hold;
    }

    /** The innermost hold bound to the calling thread, if any. */
    public static Optional<Hold> current() {
        return ThreadHolds.current();
    }

    /** {@code d} from now on {@link System#nanoTime()}'s scale, saturated far in the future. */
    public static long nanosFromNow(Duration d) {
        long nanos;
        try {
            nanos = Math.min(LONGEST_NANOS, d.toNanos());
        } catch (ArithmeticException tooLong) {
            nanos = LONGEST_NANOS;
        }
        return System.nanoTime() + nanos;
    }

    /** The Warden lease. */
    Lease lease() {
        return lease;
    }

    /** What the task sees: the lease, read-only. */
    public Lease view() {
        return view;
    }

    boolean isBound() {
        return bound.get();
    }

    /** Ends the binding to its thread; from any thread, once. */
    void unbind() {
        if (bound.compareAndSet(true, false)) {
            ThreadHolds.remove(this);
        }
    }

    /**
     * The delay of a release meant for {@code untilLockAtLeast} from now, brought forward to the earliest end
     * of the maximum hold time: so the end of {@code lockAtLeastFor} is always an orderly release on the
     * keeper's clock, never a limit that passes first and reads as a lost lease.
     */
    Duration releaseDelay(Duration untilLockAtLeast) {
        long toHoldEnd = holdEndsNoEarlierThan - System.nanoTime();
        return toHoldEnd <= 0 ? Duration.ZERO
                : untilLockAtLeast.compareTo(Duration.ofNanos(toHoldEnd)) < 0 ? untilLockAtLeast
                : Duration.ofNanos(toHoldEnd);
    }

    /**
     * Releases the lease {@code untilLockAtLeast} from now, brought forward to the earliest end of the maximum
     * hold time ({@link #releaseDelay}); false when that is now, or the lease is no longer held. The task is
     * over, so the maximum hold time only backs the release up from here: it is moved {@link #RELEASE_BACKSTOP}
     * past the release. The release's delay is read from the clock before it is scheduled, and a thread
     * preempted in between (a loaded machine) would otherwise schedule it after the limit, which then passes
     * first and reads as a lost lease.
     */
    boolean releaseLater(Duration untilLockAtLeast) {
        Duration delay = releaseDelay(untilLockAtLeast);
        if (delay.isZero() || !lease.setMaxHoldTime(delay.plus(RELEASE_BACKSTOP))) {
            return false;
        }
        return lease.releaseAfter(delay);
    }

    /** Moves the maximum hold time to {@code fromNow} from now; false when the lease is no longer held. */
    boolean moveHoldEnd(Duration fromNow) {
        long earliest = nanosFromNow(fromNow);
        if (!lease.setMaxHoldTime(fromNow)) {
            return false;
        }
        holdEndsNoEarlierThan = earliest;
        return true;
    }

    /**
     * Releases the lease now, waiting for the server. Never throws: a release the server does not confirm
     * leaves a lock that expires within its TTL, as renewal has stopped.
     *
     * @param unlocking whether the task's unlock asks: a lease lost before it is then worth a warning
     */
    void release(boolean unlocking) {
        try {
            ReleaseOutcome outcome = lease.release();
            if (outcome == ReleaseOutcome.LOST && unlocking) {
                log.warn("lock '{}' (token {}) had been lost before it was unlocked: the task did not hold it to its"
                        + " end", lease.name(), lease.fencingToken());
            }
        } catch (LockException e) {
            log.warn("the release of lock '{}' (token {}) was not confirmed; it expires within its TTL",
                    lease.name(), lease.fencingToken(), e);
        }
    }

    @Override
    public String toString() {
        return "Hold[" + lease + (bound.get() ? ", bound]" : "]");
    }
}
