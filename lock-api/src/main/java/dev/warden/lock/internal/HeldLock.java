package dev.warden.lock.internal;

import dev.warden.lock.FencingEpoch;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.internal.config.Durations;
import dev.warden.lock.internal.time.Timekeeper.Alarm;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.HolderEvictingDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One granted lock and its keeper: the hold count, the validity deadline, the maximum hold time,
 * the renewal and deadline timers, and the news of its loss. Lease objects are views of it; the
 * release itself is {@link Release}'s.
 *
 * <p>Deadlines: the lease is valid until its last confirmation (the send time of the grant's poll
 * or of the last confirmed renewal) plus the TTL less the drift allowance, and never past its
 * maximum hold time. Whoever looks first after a deadline — the keeper's timer, a renewal's answer,
 * {@link #isValid()} — marks the lease lost, once.
 *
 * <p>Timers: the renewal timer runs every TTL/3. The deadline timer is armed only while a renewal
 * is outstanding, or when a deadline falls before the next renewal: between renewals the renewal
 * timer finds a passed deadline itself, and most locks are released before their first renewal, so
 * most leases cost one timer, not two.
 *
 * <p>Concurrency: {@code holds}, {@code state}, {@code confirmedAtNanos}, the timers,
 * {@code renewalInFlight} and {@code releasing} are guarded by {@code this};
 * {@code validUntilNanos} is written under it and volatile for reads. Timers and renewal answers
 * run on the keeper's and the driver's threads; no call out (driver, observer, listeners, queue)
 * is made while holding the monitor, except sending a renewal, which only starts a call.
 */
final class HeldLock {

    private static final Logger log = LoggerFactory.getLogger(HeldLock.class);

    enum State { HELD, RELEASING, RELEASED, LOST }

    /** How many holds a release gives back. */
    enum Holds { ONE, ALL }

    /** Who releases: the holder, or the client closing underneath it (its listeners hear CLIENT_CLOSED). */
    enum Releaser { HOLDER, CLOSING_CLIENT }

    private final ClientParts parts;
    private final String name;
    private final Grant grant;
    private final long token;
    private final Duration ttl;
    private final long ttlNanos;
    private final long driftNanos;
    /** When the maximum hold time passes; guarded by {@code this} (a holder may move it). */
    private long holdEndsAtNanos;
    private final Thread reentryThread;
    private final LocalQueue.Permit queuePermit;
    /** What of a shared name is held; null for a lock. */
    private final Share share;
    private final LossNotice loss;

    private int holds = 1;
    private State state = State.HELD;
    private volatile long validUntilNanos;
    private long confirmedAtNanos;
    private Alarm renewal;
    private Alarm deadline;
    private CompletableFuture<Boolean> renewalInFlight;
    private CompletableFuture<ReleaseOutcome> releasing;

    /**
     * @param validFromNanos when the server's clock for the grant started (the poll's send time, or earlier)
     * @param grantedAtNanos when the grant arrived: the maximum hold time counts from here
     */
    HeldLock(ClientParts parts, String name, Grant grant, long validFromNanos, long grantedAtNanos,
             Optional<Duration> maxHoldTime, LocalQueue.Permit queuePermit, Thread reentryThread, Share share) {
        this.parts = parts;
        this.name = name;
        this.grant = grant;
        this.token = FencingEpoch.compose(parts.settings().fencingEpoch(), grant.fencingToken());
        this.ttl = parts.config().ttl();
        this.ttlNanos = ttl.toNanos();
        // Server clocks may run fast; Redlock's allowance: 1% of the TTL plus 2 ms.
        this.driftNanos = ttlNanos / 100 + TimeUnit.MILLISECONDS.toNanos(2);
        this.holdEndsAtNanos = grantedAtNanos + maxHoldTime.map(d -> Math.min(Wait.LONGEST_NANOS,
                Durations.toNanosSaturated(d))).orElse(Wait.LONGEST_NANOS);
        this.queuePermit = queuePermit;
        this.reentryThread = reentryThread;
        this.share = share;
        this.loss = new LossNotice(name, parts.events());
        this.confirmedAtNanos = validFromNanos;
        this.validUntilNanos = validFromNanos + ttlNanos - driftNanos;
    }

    /** Starts the keeper. */
    synchronized void start() {
        if (state != State.HELD) {
            return;
        }
        long now = parts.time().nanoTime();
        renewal = parts.time().schedule(this::renewTick, renewInterval());
        armDeadlineBefore(now, now + renewInterval());
    }

    String name() {
        return name;
    }

    /** The lease's fencing token: the grant's under the client's epoch. */
    long token() {
        return token;
    }

    Grant grant() {
        return grant;
    }

    Duration ttl() {
        return ttl;
    }

    Thread reentryThread() {
        return reentryThread;
    }

    /** Whose reentrant holds this one joins: the name, told apart by the read or write side of a shared name. */
    String holdKey() {
        return HoldKeys.of(name, share);
    }

    ClientParts parts() {
        return parts;
    }

    LocalQueue.Permit queuePermit() {
        return queuePermit;
    }

    /** Held: neither released (or being released) nor lost. Reads no clock. */
    synchronized boolean isHeld() {
        return state == State.HELD;
    }

    /**
     * The moment of truth: a lease past a deadline is marked lost here, and its listeners have run
     * before this returns false.
     */
    boolean isValid() {
        long now = parts.time().nanoTime();
        LostReason due;
        synchronized (this) {
            if (state == State.RELEASING || state == State.RELEASED) {
                return false;
            }
            due = state == State.HELD ? dueLoss(now) : null;
            if (state == State.HELD && due == null) {
                return true;
            }
        }
        if (due != null) {
            markLost(due, null);
        }
        loss.awaitTold();
        return false;
    }

    Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        long end;
        synchronized (this) {
            end = nextDeadline();
        }
        return Duration.ofNanos(Math.max(0, end - parts.time().nanoTime()));
    }

    /**
     * Moves the maximum hold time to {@code fromNowNanos} from now; false when the lease is no longer held
     * or already past a deadline. The deadline timer is re-armed for the new limit.
     */
    boolean moveHoldEnd(long fromNowNanos) {
        synchronized (this) {
            long now = parts.time().nanoTime();
            if (state != State.HELD || dueLoss(now) != null) {
                return false;
            }
            holdEndsAtNanos = now + Math.min(Wait.LONGEST_NANOS, Math.max(0, fromNowNanos));
            cancel(deadline);
            deadline = null;
            if (dueLoss(now) == null) {
                armDeadline(now);
                return true;
            }
        }
        // Moved to now: the hold ends here, as a limit that passed.
        markLost(LostReason.MAX_HOLD_TIME, null);
        return true;
    }

    /** Adds a hold for the same thread, unless the lock is no longer held. */
    synchronized boolean tryReenter() {
        if (state != State.HELD || dueLoss(parts.time().nanoTime()) != null) {
            return false;
        }
        holds++;
        return true;
    }

    void onLost(Consumer<LeaseLost> listener) {
        loss.add(listener);
    }

    /** How the lease was lost, once it was. */
    Optional<LeaseLost> lost() {
        return loss.event();
    }

    // ----- the keeper ---------------------------------------------------------------------------

    private long renewInterval() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(1), ttlNanos / 3);
    }

    /** Called with the monitor held: which deadline has passed at {@code now}, if any. */
    private LostReason dueLoss(long now) {
        if (now - holdEndsAtNanos >= 0) {
            return LostReason.MAX_HOLD_TIME;
        }
        return now - validUntilNanos >= 0 ? LostReason.EXPIRED : null;
    }

    /** Called with the monitor held. */
    private long nextDeadline() {
        return validUntilNanos - holdEndsAtNanos < 0 ? validUntilNanos : holdEndsAtNanos;
    }

    /** Called with the monitor held: arms the deadline timer if a deadline comes before {@code before}. */
    private void armDeadlineBefore(long now, long before) {
        if (nextDeadline() - before < 0) {
            armDeadline(now);
        }
    }

    /** Called with the monitor held: arms the deadline timer, unless it is armed. */
    private void armDeadline(long now) {
        if (deadline == null) {
            deadline = parts.time().schedule(this::deadlineTick, nextDeadline() - now);
        }
    }

    private void renewTick() {
        // A dropped lease of this client is still held and renewed: report it here.
        parts.leaks().poll();
        long sentAt;
        CompletableFuture<Boolean> call = null;
        LostReason due;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            renewal = null;
            sentAt = parts.time().nanoTime();
            due = dueLoss(sentAt);
            if (due == null) {
                parts.observer().renewing(name, token);
                armDeadline(sentAt);
                try {
                    call = parts.leases().renew(grant, ttl).toCompletableFuture();
                } catch (RuntimeException e) {
                    call = CompletableFuture.failedFuture(e);
                }
                renewalInFlight = call;
            }
        }
        if (due != null) {
            // Past a deadline the lease may already have read invalid: no renewal may revive it.
            markLost(due, null);
            return;
        }
        // Not ours any more: an evicting driver says whether an operator forced the lock away.
        // (Operators force locks away, not shares.)
        call.thenCompose(ours -> Boolean.TRUE.equals(ours) || share != null
                        || !(parts.driver() instanceof HolderEvictingDriver evicting)
                        ? CompletableFuture.completedFuture(Boolean.TRUE.equals(ours) ? null : LostReason.NOT_OWNER)
                        : evicting.evicted(LeaseCache.serverGrant(grant)).toCompletableFuture().handle((forced, e) ->
                                Boolean.TRUE.equals(forced) ? LostReason.FORCED : LostReason.NOT_OWNER))
                .whenComplete((gone, error) -> renewed(sentAt, error == null && gone == null, gone, error));
    }

    private void renewed(long sentAt, boolean stillOurs, LostReason gone, Throwable error) {
        LostReason reason;
        synchronized (this) {
            renewalInFlight = null;
            if (state != State.HELD) {
                return;
            }
            long now = parts.time().nanoTime();
            LostReason due = dueLoss(now);
            if (due == null && error == null && stillOurs) {
                confirmedAtNanos = sentAt;
                long candidate = sentAt + ttlNanos - driftNanos;
                if (candidate - validUntilNanos > 0) {
                    validUntilNanos = candidate;
                }
                parts.observer().renewed(name, token, Duration.ofNanos(Math.max(0, nextDeadline() - now)));
                cancel(deadline);
                deadline = null;
                renewal = parts.time().schedule(this::renewTick, renewInterval());
                armDeadlineBefore(now, now + renewInterval());
                return;
            }
            if (due == null && error != null) {
                // A transport error does not prove the lock is gone: retry while the lease is valid;
                // the deadline timer, armed since the renewal was sent, ends it if none succeeds.
                log.debug("renewal of lock '{}' failed, retrying", name, error);
                renewal = parts.time().schedule(this::renewTick,
                        Math.max(TimeUnit.MILLISECONDS.toNanos(10), renewInterval() / 4));
                return;
            }
            reason = due != null ? due : gone != null ? gone : LostReason.NOT_OWNER;
        }
        markLost(reason, error);
    }

    private void deadlineTick() {
        LostReason due;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            deadline = null;
            long now = parts.time().nanoTime();
            due = dueLoss(now);
            if (due == null) {
                deadline = parts.time().schedule(this::deadlineTick, nextDeadline() - now);
                return;
            }
        }
        markLost(due, null);
    }

    /**
     * Marks the lease lost, once: timers stop, the local queue moves on, the observer and listeners
     * are told; whatever the server still keeps of it is released ({@link Release#freeOnServer}).
     */
    void markLost(LostReason reason, Throwable cause) {
        LeaseLost event;
        CompletableFuture<Boolean> pendingRenewal;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            state = State.LOST;
            cancelTimers();
            long now = parts.time().nanoTime();
            event = lostEvent(reason, cause, now);
            if (now - validUntilNanos < 0) {
                validUntilNanos = now;
            }
            pendingRenewal = renewalInFlight;
        }
        log.warn("lease on lock '{}' (token {}) lost: {}", name, token, reason);
        parts.registry().forget(this);
        queuePermit.run();
        parts.observer().lost(event);
        loss.announce(event);
        Release.freeOnServer(this, pendingRenewal, reason);
    }

    /** Called with the monitor held. */
    private LeaseLost lostEvent(LostReason reason, Throwable cause, long now) {
        // A deadline is exact; a lock found gone was last known ours when the server last confirmed it.
        long lastValid = switch (reason) {
            case EXPIRED -> validUntilNanos;
            case MAX_HOLD_TIME -> nextDeadline();
            default -> confirmedAtNanos;
        };
        return new LeaseLost(name, token, reason, Optional.ofNullable(cause),
                parts.time().now().minusNanos(Math.max(0, now - lastValid)));
    }

    private void cancelTimers() {
        cancel(renewal);
        cancel(deadline);
        renewal = null;
        deadline = null;
    }

    private static void cancel(Alarm alarm) {
        if (alarm != null) {
            alarm.cancel();
        }
    }

    // ----- release --------------------------------------------------------------------------------

    /**
     * Releases without blocking: completes with the outcome, or exceptionally with
     * {@code UNAVAILABLE} when the server did not confirm (the lock then expires within its TTL, as
     * renewal has stopped). A release already under way is joined, not repeated.
     */
    CompletableFuture<ReleaseOutcome> release(Holds which, Releaser releaser) {
        CompletableFuture<Boolean> pendingRenewal;
        CompletableFuture<ReleaseOutcome> result = new CompletableFuture<>();
        synchronized (this) {
            if (state == State.LOST) {
                parts.observer().released(name, token, ReleaseOutcome.LOST);
                return CompletableFuture.completedFuture(ReleaseOutcome.LOST);
            }
            if (state == State.RELEASING) {
                return releasing;
            }
            if (state != State.HELD) {
                return CompletableFuture.completedFuture(ReleaseOutcome.ALREADY_RELEASED);
            }
            holds = which == Holds.ALL ? 0 : holds - 1;
            if (holds > 0) {
                return CompletableFuture.completedFuture(ReleaseOutcome.STILL_HELD);
            }
            state = State.RELEASING;
            releasing = result;
            cancelTimers();
            pendingRenewal = renewalInFlight;
        }
        Release.start(this, releaser, pendingRenewal, result);
        return result;
    }

    /**
     * The server step of a release is done: the lease is released, or, when the client closed
     * underneath it, lost (CLIENT_CLOSED), and its listeners are told.
     */
    void released(Releaser releaser, Throwable error) {
        LeaseLost event = null;
        synchronized (this) {
            if (releaser == Releaser.CLOSING_CLIENT) {
                state = State.LOST;
                event = lostEvent(LostReason.CLIENT_CLOSED, error, parts.time().nanoTime());
            } else {
                state = State.RELEASED;
            }
        }
        parts.registry().forget(this);
        if (event != null) {
            parts.observer().lost(event);
            loss.announce(event);
        }
    }

    @Override
    public String toString() {
        return "HeldLock[" + name + ", token " + token + "]";
    }
}
