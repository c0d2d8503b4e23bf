package dev.warden.lock.internal;

import dev.warden.lock.FencingEpoch;
import dev.warden.lock.LockException;
import dev.warden.lock.internal.time.Timekeeper.Alarm;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The one acquire loop every backend runs: wait for the local turn, then poll the driver, and
 * between polls wait for {@code changed()}, the deadline or a stop, whichever comes first. A failed
 * call (the server unreachable or silent) abandons the attempt and, after a backoff, starts a new
 * one, until the wait or the outage tolerance runs out ({@link Outage}). A stop (timeout,
 * interrupt, cancel, close) releases a grant that raced in, abandons the attempt and passes the
 * local turn on before {@link #result} completes, so nothing is left held when the caller hears of
 * it.
 *
 * <p>Concurrency: every mutable field is guarded by {@code this}. Steps run on whichever thread
 * completes the previous one (the caller's, a driver's, the keeper's); the driver never runs two
 * calls of one attempt at once, and no call out is made while holding the monitor.
 */
final class Acquisition {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

    private final ClientParts parts;
    private final String name;
    private final String owner;
    private final Wait wait;
    private final Optional<Duration> maxHoldTime;
    private final Thread reentryThread;
    /** What of a shared name this acquisition asks for; null for a lock. */
    private final Share share;
    /**
     * Whether a kept hold may serve it (lease caching): a lock's acquisitions, not an election's, whose
     * holder observers read as the leader.
     */
    private final boolean mayKeep;
    private final long startNanos;
    private final Outage outage;

    /** Completes with the held lock, or exceptionally once everything has been cleaned up. */
    final CompletableFuture<HeldLock> result = new CompletableFuture<>();

    private boolean stopping;
    private boolean granted;
    private LockException stopReason;
    private CompletableFuture<LocalQueue.Turn> turn;
    private LocalQueue.Permit permit;
    private LockAttempt attempt;
    private CompletableFuture<Void> wake;
    private Alarm deadlineTimer;
    private Alarm retryTimer;

    /**
     * @param reentryThread the blocking caller, whose later acquisitions re-enter; null for asynchronous ones
     * @param share what of the shared name {@code name} to take; null to take the lock {@code name}
     * @param mayKeep whether a hold the client keeps may serve it, and its grant be kept after release
     */
    Acquisition(ClientParts parts, String name, String owner, Wait wait, Optional<Duration> maxHoldTime,
                Thread reentryThread, Share share, boolean mayKeep) {
        this.parts = parts;
        this.mayKeep = mayKeep;
        this.name = name;
        this.owner = owner;
        this.wait = wait;
        this.maxHoldTime = maxHoldTime;
        this.reentryThread = reentryThread;
        this.share = share;
        this.startNanos = parts.time().nanoTime();
        this.outage = new Outage(parts.settings().outageTolerance());
    }

    void start() {
        // A shared name's contenders may hold together: each talks to the server, none queues locally.
        CompletableFuture<LocalQueue.Turn> entered = share == null ? parts.queue().enter(name, owner)
                : CompletableFuture.completedFuture(parts.queue().alone());
        boolean leaveNow;
        synchronized (this) {
            turn = entered;
            // Stopped (client closing) before the turn was known: leave at once.
            leaveNow = stopping;
            if (wait instanceof Wait.UpTo upTo && !stopping) {
                long left = startNanos + upTo.nanos() - parts.time().nanoTime();
                if (left > 0) {
                    deadlineTimer = parts.time().schedule(() -> stop(timeout()), left);
                } else if (!entered.isDone()) {
                    stopping = true;
                    stopReason = timeout();
                    leaveNow = true;
                }
            }
        }
        if (leaveNow) {
            parts.queue().leave(name, entered);
        }
        entered.whenComplete((t, error) -> {
            if (error != null) {
                giveUp();
            } else {
                onTurn(t);
            }
        });
        result.whenComplete((h, error) -> {
            if (error instanceof CancellationException) {
                stop(new LockException(LockException.Reason.CANCELLED, "acquisition of lock '" + name + "' was cancelled"));
            }
        });
    }

    /** Stops waiting; returns at once, {@link #result} completes when the clean-up is done. */
    void stop(LockException why) {
        CompletableFuture<LocalQueue.Turn> t;
        CompletableFuture<Void> w;
        boolean backingOff;
        synchronized (this) {
            if (stopping || granted) {
                return;
            }
            stopping = true;
            // An outage outranks a timeout: "busy" must not hide "unreachable".
            stopReason = why.reason() == LockException.Reason.TIMEOUT && outage.isOngoing()
                    ? unreachable(outage.lastError()) : why;
            t = turn;
            w = wake;
            backingOff = retryTimer != null;
            if (backingOff) {
                retryTimer.cancel();
                retryTimer = null;
            }
        }
        if (t != null) {
            parts.queue().leave(name, t);
        }
        if (w != null) {
            w.complete(null);
        }
        if (backingOff) {
            giveUp();
        }
    }

    private void onTurn(LocalQueue.Turn t) {
        boolean stop;
        synchronized (this) {
            permit = t.permit();
            stop = stopping;
        }
        if (t.grant() != null) {
            // The previous holder released and the server granted this acquisition in one step.
            onGrant(t.grant(), t.grantSentAtNanos());
        } else if (stop) {
            giveUp();
        } else {
            newAttempt();
        }
    }

    private void newAttempt() {
        LockAttempt a;
        try {
            a = share == null ? (mayKeep ? parts.leases() : parts.driver()).attempt(name, owner)
                    : ((SharedLockDriver) parts.driver()).attemptShared(name, owner, share);
        } catch (RuntimeException e) {
            onFailure(e);
            return;
        }
        synchronized (this) {
            attempt = a;
        }
        poll();
    }

    private void poll() {
        long sentAt = parts.time().nanoTime();
        CompletionStage<Optional<Grant>> polled;
        try {
            polled = attempt().poll(parts.config().ttl());
        } catch (RuntimeException e) {
            onFailure(e);
            return;
        }
        polled.whenComplete((grant, error) -> {
            if (error != null) {
                onFailure(error);
                return;
            }
            synchronized (this) {
                outage.recovered();
            }
            if (grant.isPresent()) {
                onGrant(grant.get(), sentAt);
            } else {
                waitForChange();
            }
        });
    }

    private synchronized LockAttempt attempt() {
        return attempt;
    }

    private void waitForChange() {
        CompletableFuture<Void> w = new CompletableFuture<>();
        boolean stop;
        synchronized (this) {
            if (!stopping && wait instanceof Wait.UpTo upTo && parts.time().nanoTime() - startNanos - upTo.nanos() >= 0) {
                stopping = true;
                stopReason = timeout();
            }
            stop = stopping;
            wake = w;
        }
        if (stop) {
            giveUp();
            return;
        }
        CompletableFuture<Void> changed;
        try {
            changed = attempt().changed().toCompletableFuture();
        } catch (RuntimeException e) {
            onFailure(e);
            return;
        }
        changed.whenComplete((v, error) -> {
            if (error != null) {
                w.completeExceptionally(error);
            } else {
                w.complete(null);
            }
        });
        w.whenComplete((v, error) -> {
            boolean stopNow;
            synchronized (this) {
                stopNow = stopping;
            }
            if (stopNow) {
                giveUp();
            } else if (error != null) {
                onFailure(error);
            } else {
                poll();
            }
        });
    }

    /**
     * A call failed. Unless the caller gave up or the failure is not an outage, the attempt is
     * abandoned and a new one starts after a backoff; past the outage tolerance the acquisition
     * fails with UNAVAILABLE.
     */
    private void onFailure(Throwable error) {
        Throwable cause = Outage.unwrap(error);
        LockAttempt old;
        long pause = 0;
        boolean retry;
        synchronized (this) {
            old = attempt;
            attempt = null;
            long now = parts.time().nanoTime();
            boolean waitLeft = !(wait instanceof Wait.UpTo upTo) || now - startNanos - upTo.nanos() < 0;
            retry = !stopping && Outage.isOutage(cause) && outage.failed(now, cause) && waitLeft;
            if (retry) {
                pause = outage.backoffNanos(now);
            } else if (!stopping || stopReason.reason() == LockException.Reason.TIMEOUT) {
                stopping = true;
                stopReason = Outage.isOutage(cause) ? unreachable(cause) : asLockException(cause);
            }
        }
        if (retry) {
            log.debug("lock '{}' could not be polled, trying again in {} ms", name, pause / 1_000_000, cause);
            long delay = pause;
            abandon(old).whenComplete((v, e) -> scheduleRetry(delay));
        } else {
            cancelDeadline();
            abandon(old).whenComplete((v, e) -> finish());
        }
    }

    private void scheduleRetry(long delayNanos) {
        boolean stop;
        synchronized (this) {
            stop = stopping;
            if (!stop) {
                retryTimer = parts.time().schedule(this::retry, delayNanos);
            }
        }
        if (stop) {
            // Stopped while the old attempt was being abandoned: nothing is left to clean up.
            cancelDeadline();
            finish();
        }
    }

    private void retry() {
        synchronized (this) {
            if (stopping) {
                return;
            }
            retryTimer = null;
        }
        newAttempt();
    }

    private void onGrant(Grant grant, long sentAt) {
        HeldLock held = null;
        synchronized (this) {
            if (!stopping && parts.registry().isClosed()) {
                stopping = true;
                stopReason = new LockException(LockException.Reason.CLOSED, "the lock client was closed");
            }
            if (!stopping && !FencingEpoch.fits(grant.fencingToken())) {
                // A token that does not fit below the epoch would compare wrongly with every other: no lease.
                stopping = true;
                stopReason = new LockException(LockException.Reason.PROTOCOL, "the " + parts.config().backend()
                        + " backend granted lock '" + name + "' the fencing token " + grant.fencingToken()
                        + ", outside 0.." + FencingEpoch.MAX_BACKEND_TOKEN + " (53 bits); the grant is released");
            }
            if (!stopping) {
                granted = true;
                cancelDeadline();
                long validFrom = grant.validFromNanos(sentAt);
                held = new HeldLock(parts, name, grant, validFrom - sentAt < 0 ? validFrom : sentAt,
                        parts.time().nanoTime(), maxHoldTime, permit, reentryThread, share);
            }
        }
        if (held == null) {
            releaseLate(grant);
            return;
        }
        parts.registry().remember(held);
        held.start();
        parts.observer().granted(name, held.token(), Duration.ofNanos(parts.time().nanoTime() - startNanos));
        parts.registry().removePending(this);
        if (!result.complete(held)) {
            // Cancelled as the grant arrived: the caller will never see this lease.
            Release.inBackground(held, HeldLock.Releaser.HOLDER);
        }
    }

    private void releaseLate(Grant grant) {
        CompletableFuture<?> release;
        try {
            release = parts.releaseOnServer(grant).toCompletableFuture();
        } catch (RuntimeException e) {
            release = CompletableFuture.failedFuture(e);
        }
        release.whenComplete((removed, error) -> {
            if (error != null) {
                log.warn("could not release lock '{}' granted after its acquisition stopped; it expires within its TTL",
                        name, error);
            }
            finish();
        });
    }

    /** Abandons the attempt, if any, then finishes. */
    private void giveUp() {
        LockAttempt a;
        synchronized (this) {
            a = attempt;
            attempt = null;
        }
        cancelDeadline();
        abandon(a).whenComplete((v, e) -> finish());
    }

    private CompletableFuture<Void> abandon(LockAttempt a) {
        if (a == null) {
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> abandoned;
        try {
            abandoned = a.abandon().toCompletableFuture();
        } catch (RuntimeException e) {
            abandoned = CompletableFuture.failedFuture(e);
        }
        return abandoned.handle((v, error) -> {
            if (error != null) {
                log.warn("could not abandon the attempt on lock '{}'", name, error);
            }
            return null;
        });
    }

    private void finish() {
        LocalQueue.Permit p;
        LockException why;
        synchronized (this) {
            p = permit;
            permit = null;
            why = stopReason;
        }
        if (p != null) {
            p.run();
        }
        parts.registry().removePending(this);
        result.completeExceptionally(why != null ? why : unreachable(null));
    }

    private void cancelDeadline() {
        Alarm d;
        synchronized (this) {
            d = deadlineTimer;
            deadlineTimer = null;
        }
        if (d != null) {
            d.cancel();
        }
    }

    private LockException timeout() {
        return new LockException(LockException.Reason.TIMEOUT, "timed out waiting for lock '" + name + "'");
    }

    /** Called with the monitor held, or with none needed. */
    private LockException unreachable(Throwable cause) {
        return outage.unavailable("lock '" + name + "' could not be acquired", cause, parts.time().nanoTime());
    }

    private LockException asLockException(Throwable cause) {
        return cause instanceof LockException e ? e : unreachable(cause);
    }
}
