package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * One etcd lease and its keeper. Every lock key and queue entry of a client hangs on the lease of
 * its current session, so the session is lost as a whole: when a keep-alive finds the lease gone,
 * or when the TTL passes on the local monotonic clock since the last keep-alive that was confirmed
 * (counted from when it was sent). A keep-alive only proves the lease is alive, never that a key
 * on it still exists: renewals read the key too.
 *
 * <p>Concurrency: {@code confirmedSentAt}, {@code closed} and the timers are guarded by {@code this};
 * {@code lost} and {@code waiters} are thread-safe. Keep-alive answers arrive on the channel's I/O
 * thread, timers on the driver's.
 */
final class Session {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private final long leaseId;
    private final long ttlNanos;
    private final Calls calls;
    private final BiConsumer<Session, Throwable> onLost;
    /** Completes, with the cause, when the session is lost; attempts waiting on it fail at once. */
    private final CompletableFuture<Throwable> lost = new CompletableFuture<>();
    private final java.util.Map<CompletableFuture<Void>, java.util.function.Function<Throwable, Throwable>> waiters =
            new java.util.concurrent.ConcurrentHashMap<>();

    private long confirmedSentAt;
    private boolean closed;
    private ScheduledFuture<?> keepAliveTimer;
    private ScheduledFuture<?> expiryTimer;

    Session(long leaseId, Duration ttl, long grantSentAt, Calls calls, BiConsumer<Session, Throwable> onLost) {
        this.leaseId = leaseId;
        this.ttlNanos = ttl.toNanos();
        this.calls = calls;
        this.onLost = onLost;
        this.confirmedSentAt = grantSentAt;
    }

    long leaseId() {
        return leaseId;
    }

    /**
     * Fails {@code wait} with {@code why} if the session is lost before {@code wait} completes; the
     * registration goes away when it completes, so long-lived sessions collect nothing.
     */
    void failOnLoss(CompletableFuture<Void> wait, java.util.function.Function<Throwable, Throwable> why) {
        waiters.put(wait, why);
        wait.whenComplete((v, e) -> waiters.remove(wait));
        if (lost.isDone()) {
            wait.completeExceptionally(why.apply(lost.join()));
        }
    }

    synchronized void start() {
        scheduleKeepAlive(ttlNanos / 3);
        scheduleExpiryCheck();
    }

    /**
     * The send time, on {@link System#nanoTime()}, of the last keep-alive the server confirmed (or of
     * the grant): the server keeps the lease at least one TTL from then.
     */
    synchronized long confirmedSentAt() {
        return confirmedSentAt;
    }

    /** Alive: not lost, and a keep-alive sent less than one TTL ago was confirmed. */
    synchronized boolean isAlive() {
        return !lost.isDone() && !closed && System.nanoTime() - confirmedSentAt - ttlNanos < 0;
    }

    /**
     * One keep-alive, sent now. Completes normally when the server confirmed the lease; fails with
     * {@link EtcdErrors.LeaseGone} (after losing the session) when the lease is gone, or with the
     * transport error.
     */
    CompletableFuture<Void> keepAliveOnce() {
        if (lost.isDone()) {
            return CompletableFuture.failedFuture(new EtcdErrors.LeaseGone("etcd lease " + Long.toHexString(leaseId)
                    + " was lost"));
        }
        long sentAt = System.nanoTime();
        return calls.keepAliveOnce("a keep-alive of lease " + Long.toHexString(leaseId), leaseId)
                .handle((response, error) -> {
                    if (error == null && response.getTTL() > 0) {
                        confirm(sentAt);
                        return null;
                    }
                    if (error == null || EtcdErrors.leaseNotFound(error)) {
                        LockException why = new LockException(LockException.Reason.UNAVAILABLE,
                                "etcd lease " + Long.toHexString(leaseId) + " is gone (expired or revoked on the server)");
                        lose(why);
                        throw new EtcdErrors.LeaseGone(why.getMessage());
                    }
                    throw error instanceof RuntimeException r ? r : new RuntimeException(error);
                });
    }

    private synchronized void confirm(long sentAt) {
        if (sentAt - confirmedSentAt > 0) {
            confirmedSentAt = sentAt;
        }
    }

    private void keepAlive() {
        synchronized (this) {
            if (lost.isDone() || closed) {
                return;
            }
        }
        keepAliveOnce().whenComplete((v, error) -> {
            if (error == null) {
                scheduleKeepAlive(ttlNanos / 3);
            } else if (!lost.isDone()) {
                log.debug("keep-alive of etcd lease {} failed, retrying", Long.toHexString(leaseId), error);
                scheduleKeepAlive(Math.max(TimeUnit.MILLISECONDS.toNanos(100), ttlNanos / 12));
            }
        });
    }

    private synchronized void scheduleKeepAlive(long delayNanos) {
        if (lost.isDone() || closed) {
            return;
        }
        keepAliveTimer = calls.schedule(this::keepAlive, delayNanos);
    }

    private synchronized void scheduleExpiryCheck() {
        if (lost.isDone() || closed) {
            return;
        }
        expiryTimer = calls.schedule(this::checkExpiry, confirmedSentAt + ttlNanos - System.nanoTime());
    }

    private void checkExpiry() {
        synchronized (this) {
            if (lost.isDone() || closed) {
                return;
            }
            if (System.nanoTime() - confirmedSentAt - ttlNanos < 0) {
                scheduleExpiryCheck();
                return;
            }
        }
        lose(new LockException(LockException.Reason.UNAVAILABLE, "no keep-alive of etcd lease "
                + Long.toHexString(leaseId) + " was confirmed within its TTL of " + Duration.ofNanos(ttlNanos).toSeconds() + " s"));
    }

    /** Loses the session once: timers stop, waiting attempts fail, the driver's listener is told. */
    void lose(Throwable cause) {
        synchronized (this) {
            if (lost.isDone() || closed) {
                return;
            }
            cancelTimers();
        }
        log.warn("etcd lease {} lost: {}", Long.toHexString(leaseId), cause.getMessage());
        lost.complete(cause);
        waiters.forEach((wait, why) -> wait.completeExceptionally(why.apply(cause)));
        onLost.accept(this, cause);
    }

    /** Stops keeping the lease without reporting a loss (client close). */
    synchronized void close() {
        closed = true;
        cancelTimers();
    }

    private void cancelTimers() {
        if (keepAliveTimer != null) {
            keepAliveTimer.cancel(false);
        }
        if (expiryTimer != null) {
            expiryTimer.cancel(false);
        }
    }

    @Override
    public String toString() {
        return "etcd lease " + Long.toHexString(leaseId);
    }
}
