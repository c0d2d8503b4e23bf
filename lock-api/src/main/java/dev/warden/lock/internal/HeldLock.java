package dev.warden.lock.internal;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * One granted lock and everything that keeps it: the hold count, the validity deadline, the
 * renewal and expiry timers, and the lost listeners. Lease objects are views of it.
 */
final class HeldLock {

    private static final Logger log = LoggerFactory.getLogger(HeldLock.class);

    private enum State { HELD, RELEASING, RELEASED, LOST }

    private final DefaultLockClient client;
    private final String name;
    private final Grant grant;
    private final Duration ttl;
    private final long ttlNanos;
    private final long driftNanos;
    private final Thread reentryThread;
    private final LocalQueue.Permit queuePermit;

    private int holds = 1;
    private State state = State.HELD;
    private volatile long validUntilNanos;
    /** When the server last confirmed the lock was ours: the grant's or the last renewal's send time. */
    private long confirmedAtNanos;
    private ScheduledFuture<?> renewal;
    private ScheduledFuture<?> expiry;
    private CompletableFuture<Boolean> renewalInFlight;
    private CompletableFuture<ReleaseOutcome> releasing;
    private LeaseLost lost;
    private final List<Consumer<LeaseLost>> listeners = new ArrayList<>();

    HeldLock(DefaultLockClient client, String name, Grant grant, long sentAtNanos, LocalQueue.Permit queuePermit,
             Thread reentryThread) {
        this.client = client;
        this.name = name;
        this.grant = grant;
        this.ttl = client.config().ttl();
        this.ttlNanos = ttl.toNanos();
        // Server clocks may run fast; Redlock's allowance: 1% of the TTL plus 2 ms.
        this.driftNanos = ttlNanos / 100 + TimeUnit.MILLISECONDS.toNanos(2);
        this.queuePermit = queuePermit;
        this.reentryThread = reentryThread;
        this.confirmedAtNanos = sentAtNanos;
        this.validUntilNanos = sentAtNanos + ttlNanos - driftNanos;
    }

    /**
     * Starts the keeper. The expiry check is armed only while a renewal is outstanding (or when the
     * grant came so slowly that its deadline falls before the first renewal): between renewals the
     * renewal timer fires first and finds any expiry itself, and most locks are released before
     * their first renewal, so most leases cost one timer, not two.
     */
    synchronized void start() {
        if (state != State.HELD) {
            return;
        }
        scheduleRenewal(renewInterval());
        if (validUntilNanos - System.nanoTime() - renewInterval() < 0) {
            scheduleExpiryCheck();
        }
    }

    String name() {
        return name;
    }

    long token() {
        return grant.fencingToken();
    }

    Thread reentryThread() {
        return reentryThread;
    }

    java.util.concurrent.Executor callbacks() {
        return client.callbacks();
    }

    boolean isValid() {
        synchronized (this) {
            if (state != State.HELD) {
                return false;
            }
        }
        return System.nanoTime() - validUntilNanos < 0;
    }

    Duration remaining() {
        if (!isValid()) {
            return Duration.ZERO;
        }
        return Duration.ofNanos(Math.max(0, validUntilNanos - System.nanoTime()));
    }

    /** Adds a hold for the same thread, unless the lock is no longer held. */
    synchronized boolean tryReenter() {
        if (state != State.HELD || System.nanoTime() - validUntilNanos >= 0) {
            return false;
        }
        holds++;
        return true;
    }

    void onLost(Consumer<LeaseLost> listener) {
        LeaseLost already;
        synchronized (this) {
            already = lost;
            if (already == null) {
                listeners.add(listener);
                return;
            }
        }
        tell(listener, already);
    }

    private long renewInterval() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(1), ttlNanos / 3);
    }

    private void scheduleRenewal(long delayNanos) {
        renewal = client.scheduler().schedule(this::renew, delayNanos, TimeUnit.NANOSECONDS);
    }

    private void scheduleExpiryCheck() {
        long delay = Math.max(0, validUntilNanos - System.nanoTime());
        expiry = client.scheduler().schedule(this::checkExpiry, delay, TimeUnit.NANOSECONDS);
    }

    private void checkExpiry() {
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            if (System.nanoTime() - validUntilNanos < 0) {
                scheduleExpiryCheck();
                return;
            }
        }
        markLost(LostReason.EXPIRED, null);
    }

    private void renew() {
        long sentAt;
        CompletableFuture<Boolean> call;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            sentAt = System.nanoTime();
            if (sentAt - validUntilNanos >= 0) {
                call = null;
            } else {
                client.observer().renewing(name, grant.fencingToken());
                if (expiry == null) {
                    scheduleExpiryCheck();
                }
                try {
                    call = client.driver().renew(grant, ttl).toCompletableFuture();
                } catch (RuntimeException e) {
                    call = CompletableFuture.failedFuture(e);
                }
                renewalInFlight = call;
            }
        }
        if (call == null) {
            // Past the deadline the lease has already read invalid; a late renewal must not revive it.
            markLost(LostReason.EXPIRED, null);
            return;
        }
        call.whenComplete((stillOurs, error) -> renewed(sentAt, stillOurs, error));
    }

    private void renewed(long sentAt, Boolean stillOurs, Throwable error) {
        synchronized (this) {
            renewalInFlight = null;
            if (state != State.HELD) {
                return;
            }
            boolean expired = System.nanoTime() - validUntilNanos >= 0;
            if (error == null && Boolean.TRUE.equals(stillOurs) && !expired) {
                confirmedAtNanos = sentAt;
                long candidate = sentAt + ttlNanos - driftNanos;
                if (candidate - validUntilNanos > 0) {
                    validUntilNanos = candidate;
                }
                client.observer().renewed(name, grant.fencingToken(),
                        Duration.ofNanos(Math.max(0, validUntilNanos - System.nanoTime())));
                if (expiry != null) {
                    expiry.cancel(false);
                    expiry = null;
                }
                scheduleRenewal(renewInterval());
                return;
            }
            if (error != null && !expired) {
                // A transport error does not prove the lock is gone; retry while the lease is still
                // valid. The expiry check declares it lost at its deadline if no retry succeeds.
                log.debug("renewal of lock '{}' failed, retrying", name, error);
                scheduleRenewal(Math.max(TimeUnit.MILLISECONDS.toNanos(10), renewInterval() / 4));
                return;
            }
        }
        markLost(error == null && !Boolean.TRUE.equals(stillOurs) ? LostReason.NOT_OWNER : LostReason.EXPIRED, error);
    }

    /** Marks the lease lost at once: timers stop, the local queue moves on, listeners are told. */
    void markLost(LostReason reason, Throwable cause) {
        LeaseLost event;
        List<Consumer<LeaseLost>> toTell;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            state = State.LOST;
            cancelTimers();
            event = lostEvent(reason, cause);
            toTell = takeListeners(event);
            validUntilNanos = Math.min(validUntilNanos, System.nanoTime());
        }
        log.warn("lease on lock '{}' (token {}) lost: {}", name, grant.fencingToken(), reason);
        client.forget(this);
        queuePermit.run();
        client.observer().lost(event);
        toTell.forEach(l -> tell(l, event));
    }

    /** Called with the monitor held. */
    private LeaseLost lostEvent(LostReason reason, Throwable cause) {
        // Expiry is exact; a lock found gone was last known ours when the server last confirmed it.
        long lastValid = reason == LostReason.EXPIRED ? validUntilNanos : confirmedAtNanos;
        Instant lastValidAt = Instant.now().minusNanos(Math.max(0, System.nanoTime() - lastValid));
        return new LeaseLost(name, grant.fencingToken(), reason, Optional.ofNullable(cause), lastValidAt);
    }

    /** Called with the monitor held. */
    private List<Consumer<LeaseLost>> takeListeners(LeaseLost event) {
        lost = event;
        List<Consumer<LeaseLost>> toTell = List.copyOf(listeners);
        listeners.clear();
        return toTell;
    }

    private void tell(Consumer<LeaseLost> listener, LeaseLost event) {
        Runnable call = () -> {
            try {
                listener.accept(event);
            } catch (RuntimeException e) {
                log.warn("lease-lost listener for lock '{}' failed", name, e);
            }
        };
        try {
            client.events().execute(call);
        } catch (RejectedExecutionException closed) {
            call.run();
        }
    }

    private void cancelTimers() {
        if (renewal != null) {
            renewal.cancel(false);
        }
        if (expiry != null) {
            expiry.cancel(false);
        }
    }

    /** Releases one hold; the last one stops the keeper and compare-and-deletes on the server. */
    ReleaseOutcome releaseOne() {
        return await(releaseAsync(false, false));
    }

    /**
     * Releases without blocking, for callbacks on driver threads: completes with the outcome, or
     * exceptionally with {@code UNAVAILABLE} when the server did not confirm (the lock then expires
     * within its TTL, as renewal has stopped). Drivers bound every call by the request timeout, so
     * the stage always completes. A release already under way is joined, not repeated.
     *
     * @param allHolds release every reentrant hold at once
     * @param closing the client is closing underneath the holder: its listeners hear CLIENT_CLOSED
     */
    CompletableFuture<ReleaseOutcome> releaseAsync(boolean allHolds, boolean closing) {
        CompletableFuture<Boolean> pendingRenewal;
        CompletableFuture<ReleaseOutcome> result = new CompletableFuture<>();
        synchronized (this) {
            if (state == State.LOST) {
                client.observer().released(name, grant.fencingToken(), ReleaseOutcome.LOST);
                return CompletableFuture.completedFuture(ReleaseOutcome.LOST);
            }
            if (state == State.RELEASING) {
                return releasing;
            }
            if (state != State.HELD) {
                return CompletableFuture.completedFuture(ReleaseOutcome.ALREADY_RELEASED);
            }
            holds = allHolds ? 0 : holds - 1;
            if (holds > 0) {
                return CompletableFuture.completedFuture(ReleaseOutcome.STILL_HELD);
            }
            state = State.RELEASING;
            releasing = result;
            cancelTimers();
            pendingRenewal = renewalInFlight;
        }
        client.observer().releasing(name, grant.fencingToken());
        // No renewal may land after release returns: wait for one in flight, whatever its result.
        CompletableFuture<Void> quiet = pendingRenewal == null
                ? CompletableFuture.completedFuture(null)
                : pendingRenewal.handle((ok, error) -> null);
        // A contender waiting in this client may take the lock over in the same server step.
        LocalQueue.Waiter next = !closing && client.driver().handsOff() ? queuePermit.claimNext() : null;
        long[] handOffSentAt = new long[1];
        quiet.thenCompose(v -> {
            if (next == null) {
                return client.driver().release(grant).thenApply(r -> Boolean.TRUE.equals(r) ? HandOff.releasedOnly() : HandOff.notOwner());
            }
            handOffSentAt[0] = System.nanoTime();
            return client.driver().handOff(grant, next.owner(), ttl);
        }).whenComplete((handOff, error) -> {
            boolean removed = error == null && handOff.released();
            LeaseLost event = null;
            List<Consumer<LeaseLost>> toTell = List.of();
            synchronized (this) {
                if (closing) {
                    state = State.LOST;
                    event = lostEvent(LostReason.CLIENT_CLOSED, error);
                    toTell = takeListeners(event);
                } else {
                    state = State.RELEASED;
                }
            }
            client.forget(this);
            passTurn(next, error == null ? handOff.granted().orElse(null) : null, handOffSentAt[0]);
            if (event != null) {
                client.observer().lost(event);
                for (Consumer<LeaseLost> l : toTell) {
                    tell(l, event);
                }
            }
            if (error != null) {
                result.completeExceptionally(new LockException(LockException.Reason.UNAVAILABLE,
                        "release of lock '" + name + "' was not confirmed; it expires on the server within its TTL",
                        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error));
                return;
            }
            ReleaseOutcome outcome = removed ? ReleaseOutcome.RELEASED : ReleaseOutcome.LOST;
            client.observer().released(name, grant.fencingToken(), outcome);
            result.complete(outcome);
        });
        return result;
    }

    /** Passes the local turn on: with the grant the hand-off made for the claimed waiter, if any. */
    private void passTurn(LocalQueue.Waiter next, Grant handedOn, long sentAtNanos) {
        if (next == null) {
            queuePermit.run();
        } else if (handedOn == null) {
            queuePermit.unclaim(next);
            queuePermit.run();
        } else if (!queuePermit.handTo(next, handedOn, sentAtNanos)) {
            // The waiter gave up while the hand-off was on the wire.
            client.driver().release(handedOn).whenComplete((r, e) -> {
                if (e != null) {
                    log.warn("could not release lock '{}' handed to a waiter that gave up; it expires within its TTL", name, e);
                }
            });
        }
    }

    /** Releases on a driver thread, where blocking could starve the reply it waits for. */
    void releaseInBackground(boolean closing) {
        releaseAsync(true, closing).whenComplete((outcome, error) -> {
            if (error != null) {
                log.warn("could not release lock '{}' (token {}); it expires within its TTL", name, grant.fencingToken(), error);
            }
        });
    }

    /** The client is closing: release every hold and tell the holder its lease is gone. */
    CompletableFuture<ReleaseOutcome> releaseForClose() {
        return releaseAsync(true, true);
    }

    private ReleaseOutcome await(CompletableFuture<ReleaseOutcome> f) {
        boolean interrupted = false;
        // Drivers bound every call; this deadline only guards against a driver that breaks that promise.
        long deadline = System.nanoTime() + client.config().requestTimeout().toNanos() * 3;
        try {
            while (true) {
                try {
                    return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    // Release must finish or the lock stays held until its TTL; re-assert afterwards.
                    interrupted = true;
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof LockException le) {
                        throw new LockException(le.reason(), le.getMessage(), le.getCause());
                    }
                    throw new LockException(LockException.Reason.UNAVAILABLE, "release of lock '" + name
                            + "' was not confirmed; it expires on the server within its TTL", e.getCause());
                } catch (TimeoutException e) {
                    throw new LockException(LockException.Reason.UNAVAILABLE, "release of lock '" + name
                            + "' timed out; it expires on the server within its TTL", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
