package dev.warden.lock.internal;

import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.spi.Grant;
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
    private final Runnable queuePermit;

    private int holds = 1;
    private State state = State.HELD;
    private volatile long validUntilNanos;
    private ScheduledFuture<?> renewal;
    private ScheduledFuture<?> expiry;
    private CompletableFuture<Boolean> renewalInFlight;
    private LeaseLost lost;
    private final List<Consumer<LeaseLost>> listeners = new ArrayList<>();

    HeldLock(DefaultLockClient client, String name, Grant grant, long sentAtNanos, Runnable queuePermit,
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
        this.validUntilNanos = sentAtNanos + ttlNanos - driftNanos;
    }

    /** Starts the keeper; the lease may already be past its deadline if the grant came slowly. */
    synchronized void start() {
        if (state != State.HELD) {
            return;
        }
        scheduleRenewal(renewInterval());
        scheduleExpiryCheck();
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

    Instant expiresAt() {
        return Instant.now().plus(remaining());
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
        client.events().execute(() -> notify(listener, already));
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
            client.observer().renewing(name, grant.fencingToken());
            sentAt = System.nanoTime();
            try {
                call = client.driver().renew(grant, ttl).toCompletableFuture();
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            renewalInFlight = call;
        }
        call.whenComplete((stillOurs, error) -> renewed(sentAt, stillOurs, error));
    }

    private void renewed(long sentAt, Boolean stillOurs, Throwable error) {
        synchronized (this) {
            renewalInFlight = null;
            if (state != State.HELD) {
                return;
            }
            if (error == null && Boolean.TRUE.equals(stillOurs)) {
                long candidate = sentAt + ttlNanos - driftNanos;
                if (candidate - validUntilNanos > 0) {
                    validUntilNanos = candidate;
                }
                client.observer().renewed(name, grant.fencingToken(),
                        Duration.ofNanos(Math.max(0, validUntilNanos - System.nanoTime())));
                scheduleRenewal(renewInterval());
                return;
            }
            if (error != null) {
                // A transport error does not prove the lock is gone; retry while the lease is still
                // valid. The expiry check declares it lost at its deadline if no retry succeeds.
                log.debug("renewal of lock '{}' failed, retrying", name, error);
                scheduleRenewal(Math.max(TimeUnit.MILLISECONDS.toNanos(10), renewInterval() / 4));
                return;
            }
        }
        markLost(LostReason.NOT_OWNER, null);
    }

    /** Marks the lease lost at once: timers stop, the local queue moves on, listeners are told. */
    void markLost(LostReason reason, Throwable cause) {
        List<Consumer<LeaseLost>> toTell;
        LeaseLost event;
        synchronized (this) {
            if (state != State.HELD) {
                return;
            }
            state = State.LOST;
            long now = System.nanoTime();
            long overdue = Math.max(0, now - validUntilNanos);
            if (overdue == 0) {
                validUntilNanos = now;
            }
            Instant lastValidAt = Instant.now().minusNanos(overdue);
            event = new LeaseLost(name, grant.fencingToken(), reason, Optional.ofNullable(cause), lastValidAt);
            lost = event;
            toTell = List.copyOf(listeners);
            listeners.clear();
            cancelTimers();
        }
        log.warn("lease on lock '{}' (token {}) lost: {}", name, grant.fencingToken(), reason);
        client.observer().lost(event);
        client.forget(this);
        queuePermit.run();
        for (Consumer<LeaseLost> listener : toTell) {
            client.events().execute(() -> notify(listener, event));
        }
    }

    private void notify(Consumer<LeaseLost> listener, LeaseLost event) {
        try {
            listener.accept(event);
        } catch (RuntimeException e) {
            log.warn("lease-lost listener for lock '{}' failed", name, e);
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
        return await(releaseAsync(false));
    }

    /** Releases every hold, for client close. */
    ReleaseOutcome releaseAll() {
        return await(releaseAsync(true));
    }

    /**
     * Releases without blocking, for callbacks on driver threads: completes with the outcome, or
     * exceptionally with {@code UNAVAILABLE} when the server did not confirm (the lock then expires
     * within its TTL, as renewal has stopped). Drivers bound every call by the request timeout, so
     * the stage always completes.
     */
    CompletableFuture<ReleaseOutcome> releaseAsync(boolean allHolds) {
        CompletableFuture<Boolean> pendingRenewal;
        synchronized (this) {
            if (state == State.LOST) {
                client.observer().released(name, grant.fencingToken(), ReleaseOutcome.LOST);
                return CompletableFuture.completedFuture(ReleaseOutcome.LOST);
            }
            if (state != State.HELD) {
                return CompletableFuture.completedFuture(ReleaseOutcome.ALREADY_RELEASED);
            }
            holds = allHolds ? 0 : holds - 1;
            if (holds > 0) {
                return CompletableFuture.completedFuture(ReleaseOutcome.STILL_HELD);
            }
            state = State.RELEASING;
            cancelTimers();
            pendingRenewal = renewalInFlight;
        }
        client.observer().releasing(name, grant.fencingToken());
        // No renewal may land after release returns: wait for one in flight, whatever its result.
        CompletableFuture<Void> quiet = pendingRenewal == null
                ? CompletableFuture.completedFuture(null)
                : pendingRenewal.handle((ok, error) -> null);
        return quiet.thenCompose(v -> client.driver().release(grant))
                .handle((removed, error) -> {
                    synchronized (this) {
                        state = State.RELEASED;
                    }
                    client.forget(this);
                    queuePermit.run();
                    if (error != null) {
                        throw new CompletionException(new LockException(LockException.Reason.UNAVAILABLE,
                                "release of lock '" + name + "' was not confirmed; it expires on the server within its TTL",
                                error instanceof CompletionException && error.getCause() != null ? error.getCause() : error));
                    }
                    ReleaseOutcome outcome = Boolean.TRUE.equals(removed) ? ReleaseOutcome.RELEASED : ReleaseOutcome.LOST;
                    client.observer().released(name, grant.fencingToken(), outcome);
                    return outcome;
                });
    }

    /** Releases on a driver thread, where blocking could starve the reply it waits for. */
    void releaseInBackground() {
        releaseAsync(true).whenComplete((outcome, error) -> {
            if (error != null) {
                log.warn("could not release lock '{}' (token {}); it expires within its TTL", name, grant.fencingToken(), error);
            }
        });
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
