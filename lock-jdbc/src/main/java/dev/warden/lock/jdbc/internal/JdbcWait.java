package dev.warden.lock.jdbc.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;

/**
 * One contender's wait between polls: a notification for its lock, or a fallback delay (the holder's
 * expiry, which no one announces). It listens from its creation, before the first poll, so a release
 * between a refused poll and the wait is not missed: a notification that comes while no wait is pending
 * is remembered and the next {@link #changed} completes at once.
 *
 * <p>Concurrency: {@code ended}, {@code messageSincePoll}, {@code waiting} and {@code fallback} are
 * guarded by {@code this}; notifications arrive on the listener's thread.
 */
final class JdbcWait {

    private final Notifications notifications;
    private final Calls calls;
    private final String key;

    private boolean ended;
    private boolean messageSincePoll;
    private CompletableFuture<Void> waiting;
    private ScheduledFuture<?> fallback;

    JdbcWait(Notifications notifications, Calls calls, String key) {
        this.notifications = notifications;
        this.calls = calls;
        this.key = key;
        notifications.join(key, this);
    }

    /** A poll is about to be sent: forgets notifications it will see. False once the wait has ended. */
    synchronized boolean polling() {
        if (ended) {
            return false;
        }
        messageSincePoll = false;
        return true;
    }

    synchronized CompletionStage<Void> changed(long fallbackMillis) {
        if (calls.isClosed()) {
            return CompletableFuture.failedFuture(Calls.closedException());
        }
        if (ended || messageSincePoll) {
            messageSincePoll = false;
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> w = new CompletableFuture<>();
        waiting = w;
        fallback = calls.schedule(() -> wake(w), fallbackMillis);
        if (fallback == null) {
            takeWaiting();
            return CompletableFuture.failedFuture(Calls.closedException());
        }
        return w;
    }

    /** A notification for this lock (or a new listening connection). */
    void message() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = waiting;
            if (w == null) {
                messageSincePoll = true;
                return;
            }
        }
        calls.execute(() -> wake(w));
    }

    /** The driver closed: a pending wait fails, so the loop stops rather than waits for a timer that died. */
    void closed() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = takeWaiting();
        }
        if (w != null) {
            w.completeExceptionally(Calls.closedException());
        }
    }

    /** Granted or abandoned: stops listening; a pending wait completes. */
    void end() {
        CompletableFuture<Void> w;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            w = takeWaiting();
        }
        notifications.leave(key, this);
        if (w != null) {
            w.complete(null);
        }
    }

    private void wake(CompletableFuture<Void> w) {
        synchronized (this) {
            if (waiting == w) {
                takeWaiting();
            }
        }
        w.complete(null);
    }

    private CompletableFuture<Void> takeWaiting() {
        CompletableFuture<Void> w = waiting;
        waiting = null;
        if (fallback != null) {
            fallback.cancel(false);
            fallback = null;
        }
        return w;
    }
}
