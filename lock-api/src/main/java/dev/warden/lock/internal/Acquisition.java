package dev.warden.lock.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The one acquire loop every backend runs: wait for the local turn, then poll the driver, and
 * between polls wait for {@code changed()}, the deadline or a stop, whichever comes first. A stop
 * (timeout, interrupt, cancel, close) releases a grant that raced in, abandons the attempt and
 * passes the local turn on before {@link #result} completes, so nothing is left held when the
 * caller hears of it.
 */
final class Acquisition {

    private static final Logger log = LoggerFactory.getLogger(Acquisition.class);

    private final DefaultLockClient client;
    private final String name;
    private final String owner;
    private final long startNanos = System.nanoTime();
    private final long deadlineNanos;
    private final boolean bounded;
    private final Thread reentryThread;

    /** Completes with the held lock, or exceptionally once everything has been cleaned up. */
    final CompletableFuture<HeldLock> result = new CompletableFuture<>();

    private boolean stopping;
    private boolean granted;
    private LockException stopReason;
    private CompletableFuture<LocalQueue.Turn> turn;
    private LocalQueue.Permit permit;
    private LockAttempt attempt;
    private CompletableFuture<Void> wake;
    private ScheduledFuture<?> deadlineTimer;

    Acquisition(DefaultLockClient client, String name, String owner, long waitNanos, boolean bounded,
                Thread reentryThread) {
        this.client = client;
        this.name = name;
        this.owner = owner;
        this.bounded = bounded;
        this.deadlineNanos = startNanos + waitNanos;
        this.reentryThread = reentryThread;
    }

    void start() {
        CompletableFuture<LocalQueue.Turn> entered = client.queue().enter(name, owner);
        boolean noWait = false;
        synchronized (this) {
            turn = entered;
            // Stopped (client closing) before the turn was known: leave at once.
            noWait = stopping;
            if (bounded && !stopping) {
                long left = deadlineNanos - System.nanoTime();
                if (left > 0) {
                    deadlineTimer = client.scheduler().schedule(
                            () -> stop(timeout()), left, TimeUnit.NANOSECONDS);
                } else if (!entered.isDone()) {
                    stopping = true;
                    stopReason = timeout();
                    noWait = true;
                }
            }
        }
        if (noWait) {
            client.queue().leave(name, entered);
        }
        entered.whenComplete((t, error) -> {
            if (error != null) {
                giveUp(null);
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
        synchronized (this) {
            if (stopping || granted) {
                return;
            }
            stopping = true;
            stopReason = why;
            t = turn;
            w = wake;
        }
        if (t != null) {
            client.queue().leave(name, t);
        }
        if (w != null) {
            w.complete(null);
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
            return;
        }
        if (stop) {
            giveUp(null);
            return;
        }
        try {
            attempt = client.driver().attempt(name, owner);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        poll();
    }

    private void poll() {
        long sentAt = System.nanoTime();
        CompletionStage<Optional<Grant>> polled;
        try {
            polled = attempt.poll(client.config().ttl());
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        polled.whenComplete((grant, error) -> {
            if (error != null) {
                fail(error);
            } else if (grant.isPresent()) {
                onGrant(grant.get(), sentAt);
            } else {
                waitForChange();
            }
        });
    }

    private void waitForChange() {
        CompletableFuture<Void> w = new CompletableFuture<>();
        boolean stop;
        synchronized (this) {
            if (!stopping && bounded && System.nanoTime() - deadlineNanos >= 0) {
                stopping = true;
                stopReason = timeout();
            }
            stop = stopping;
            wake = w;
        }
        if (stop) {
            giveUp(null);
            return;
        }
        CompletableFuture<Void> changed;
        try {
            changed = attempt.changed().toCompletableFuture();
        } catch (RuntimeException e) {
            fail(e);
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
                giveUp(null);
            } else if (error != null) {
                fail(error);
            } else {
                poll();
            }
        });
    }

    private void onGrant(Grant grant, long sentAt) {
        HeldLock held = null;
        synchronized (this) {
            if (!stopping && client.isClosed()) {
                stopping = true;
                stopReason = new LockException(LockException.Reason.CLOSED, "the lock client was closed");
            }
            if (!stopping) {
                granted = true;
                cancelDeadline();
                long validFrom = grant.validFromNanos(sentAt);
                held = new HeldLock(client, name, grant, validFrom - sentAt < 0 ? validFrom : sentAt, permit, reentryThread);
            }
        }
        if (held == null) {
            releaseLate(grant);
            return;
        }
        client.remember(held);
        held.start();
        client.observer().granted(name, grant.fencingToken(), java.time.Duration.ofNanos(System.nanoTime() - startNanos));
        client.pending().remove(this);
        if (!result.complete(held)) {
            // Cancelled as the grant arrived: the caller will never see this lease.
            held.releaseInBackground(false);
        }
    }

    private void releaseLate(Grant grant) {
        CompletableFuture<?> release;
        try {
            release = client.driver().release(grant).toCompletableFuture();
        } catch (RuntimeException e) {
            release = CompletableFuture.failedFuture(e);
        }
        release.whenComplete((removed, error) -> {
            if (error != null) {
                log.warn("could not release lock '{}' granted after its acquisition stopped; it expires within its TTL",
                        name, error);
            }
            finish(null);
        });
    }

    private void giveUp(Throwable failure) {
        LockAttempt a;
        synchronized (this) {
            a = attempt;
            cancelDeadline();
        }
        if (a == null) {
            finish(failure);
            return;
        }
        CompletableFuture<Void> abandoned;
        try {
            abandoned = a.abandon().toCompletableFuture();
        } catch (RuntimeException e) {
            abandoned = CompletableFuture.failedFuture(e);
        }
        abandoned.whenComplete((v, error) -> {
            if (error != null) {
                log.warn("could not abandon the attempt on lock '{}'", name, error);
            }
            finish(failure);
        });
    }

    private void fail(Throwable error) {
        synchronized (this) {
            // An outage outranks a timeout: "busy" must not hide "unreachable".
            if (!stopping || stopReason != null && stopReason.reason() == LockException.Reason.TIMEOUT) {
                stopping = true;
                stopReason = unavailable(error);
            }
        }
        giveUp(error);
    }

    private void finish(Throwable failure) {
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
        client.pending().remove(this);
        result.completeExceptionally(why != null ? why : unavailable(failure));
    }

    private void cancelDeadline() {
        if (deadlineTimer != null) {
            deadlineTimer.cancel(false);
        }
    }

    private LockException timeout() {
        return new LockException(LockException.Reason.TIMEOUT, "timed out waiting for lock '" + name + "'");
    }

    private LockException unavailable(Throwable error) {
        Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
        if (cause instanceof LockException e) {
            return e;
        }
        return new LockException(LockException.Reason.UNAVAILABLE,
                "lock '" + name + "' could not be acquired: " + (cause == null ? "unknown error" : cause.getMessage()), cause);
    }
}
