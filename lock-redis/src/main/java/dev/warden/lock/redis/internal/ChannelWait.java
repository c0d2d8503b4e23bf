package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One contender's wait between polls, for a lock ({@link RedisAttempt}) or a shared name
 * ({@link SharedAttempt}): a message on the name's wake-up channel, or a fallback delay the attempt
 * chooses (a holder that expires without releasing, a message lost in a reconnect, a queue entry that
 * needs refreshing).
 *
 * <p>The first {@link #changed} subscribes and completes as soon as the server confirms, so the loop
 * polls again: a change between the failed poll and the subscription cannot be missed. A message that
 * arrives while no {@code changed()} is pending (during a poll) is remembered, so the next
 * {@code changed()} completes at once. {@link #end()} unsubscribes.
 *
 * <p>Concurrency: {@code subscribed}, {@code ended}, {@code messageSincePoll}, {@code waiting} and
 * {@code fallback} are guarded by {@code this}; messages arrive on the pub/sub connection's thread,
 * polls' answers on the command connection's.
 */
final class ChannelWait implements Subscriptions.Listener {

    private final RedisDriver driver;
    private final String channel;
    private final String what;
    private CompletableFuture<Void> subscribed;

    private boolean ended;
    private boolean messageSincePoll;
    private CompletableFuture<Void> waiting;
    private ScheduledFuture<?> fallback;

    /** @param what the name for messages, e.g. {@code lock 'x'} */
    ChannelWait(RedisDriver driver, String channel, String what) {
        this.driver = driver;
        this.channel = channel;
        this.what = what;
    }

    /** A poll is about to be sent: forgets messages it will see. False once the attempt has ended. */
    synchronized boolean polling() {
        if (ended) {
            return false;
        }
        messageSincePoll = false;
        return true;
    }

    /** @param fallbackMillis how long to wait at most once subscribed */
    synchronized CompletionStage<Void> changed(long fallbackMillis) {
        if (driver.isClosed()) {
            return CompletableFuture.failedFuture(closedException());
        }
        if (ended || messageSincePoll) {
            messageSincePoll = false;
            return CompletableFuture.completedFuture(null);
        }
        if (subscribed == null) {
            subscribed = driver.subscriptions().join(channel, this);
            return driver.calls().bounded("the subscription to " + what, subscribed);
        }
        CompletableFuture<Void> w = new CompletableFuture<>();
        waiting = w;
        fallback = driver.calls().schedule(() -> wake(w), fallbackMillis, TimeUnit.MILLISECONDS);
        if (fallback == null) {
            takeWaiting();
            return CompletableFuture.failedFuture(closedException());
        }
        return w;
    }

    /** Whether a message was published since the last poll, to be reported by the next changed(). */
    synchronized boolean messageSincePoll() {
        return messageSincePoll;
    }

    /** A message was published on the channel. */
    @Override
    public void message() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = waiting;
            if (w == null) {
                messageSincePoll = true;
                return;
            }
        }
        driver.calls().execute(() -> wake(w));
    }

    /** The driver closed: a pending wait fails, so the loop stops rather than waits for a timer that died. */
    @Override
    public void closed() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = takeWaiting();
        }
        if (w != null) {
            w.completeExceptionally(closedException());
        }
    }

    /** The attempt was granted or abandoned: stops listening; a pending wait completes. */
    void end() {
        CompletableFuture<Void> w;
        boolean joined;
        synchronized (this) {
            if (ended) {
                return;
            }
            ended = true;
            w = takeWaiting();
            joined = subscribed != null;
        }
        if (joined) {
            driver.subscriptions().leave(channel, this);
        }
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

    static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the lock client is closed");
    }
}
