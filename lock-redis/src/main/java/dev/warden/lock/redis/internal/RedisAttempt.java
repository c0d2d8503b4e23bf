package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One contender for one lock: runs the acquire script, and between polls waits for a release
 * message or, as a fallback for a holder that expires without releasing or a message lost in a
 * reconnect, the holder's remaining TTL capped at {@link #MAX_BACKOFF_MILLIS}.
 *
 * <p>An uncontended acquire costs one round trip: the first poll runs before any subscription.
 * Only when it finds the lock held does {@link #changed()} subscribe to the release channel, and it
 * completes as soon as the server confirms, so the loop polls again: a release between the failed
 * poll and the subscription cannot be missed. A release that arrives while no {@code changed()} is
 * pending (during a poll) is remembered, so the next {@code changed()} completes at once. A grant or
 * {@link #abandon()} ends the attempt and unsubscribes.
 *
 * <p>Concurrency: {@code subscribed}, {@code ended}, {@code releasedSincePoll}, {@code holderPttl},
 * {@code waiting} and {@code fallback} are guarded by {@code this}; release messages arrive on the
 * pub/sub connection's thread, polls' answers on the command connection's.
 */
final class RedisAttempt implements LockAttempt {

    static final long MAX_BACKOFF_MILLIS = 1000;

    private final RedisDriver driver;
    private final String name;
    private final String owner;
    private final Keys keys;
    private CompletableFuture<Void> subscribed;

    private boolean ended;
    private boolean releasedSincePoll;
    private long holderPttl = -1;
    private CompletableFuture<Void> waiting;
    private ScheduledFuture<?> fallback;

    RedisAttempt(RedisDriver driver, String name, String owner, Keys keys) {
        this.driver = driver;
        this.name = name;
        this.owner = owner;
        this.keys = keys;
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        long ttlMillis = RedisDriver.ttlMillis(ttl);
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(closedException());
            }
            if (ended) {
                return CompletableFuture.failedFuture(new IllegalStateException("attempt on lock '" + name + "' has ended"));
            }
            releasedSincePoll = false;
        }
        return driver.calls().retrying("the acquire script for lock '" + name + "'",
                () -> driver.scripts().acquire(keys, owner, ttlMillis).thenApply(this::granted),
                late -> late.ifPresent(driver::releaseQuietly));
    }

    private Optional<Grant> granted(List<Object> reply) {
        if (reply == null || reply.size() != 2 || !(reply.get(0) instanceof Long flag) || !(reply.get(1) instanceof Long value)) {
            throw new LockException(LockException.Reason.PROTOCOL, "unexpected reply to the acquire script for lock '"
                    + name + "': " + reply);
        }
        if (flag == 1L) {
            end();
            return Optional.of(new RedisGrant(keys, owner + ":" + value, value));
        }
        synchronized (this) {
            holderPttl = value;
        }
        return Optional.empty();
    }

    @Override
    public synchronized CompletionStage<Void> changed() {
        if (driver.isClosed()) {
            return CompletableFuture.failedFuture(closedException());
        }
        if (ended || releasedSincePoll) {
            releasedSincePoll = false;
            return CompletableFuture.completedFuture(null);
        }
        if (subscribed == null) {
            subscribed = driver.subscriptions().join(keys.channel(), this);
            return driver.calls().bounded("the subscription to lock '" + name + "'", subscribed);
        }
        long delay = holderPttl >= 0 ? Math.min(holderPttl + 1, MAX_BACKOFF_MILLIS) : MAX_BACKOFF_MILLIS;
        CompletableFuture<Void> w = new CompletableFuture<>();
        waiting = w;
        fallback = driver.calls().schedule(() -> wake(w), delay, TimeUnit.MILLISECONDS);
        if (fallback == null) {
            takeWaiting();
            return CompletableFuture.failedFuture(closedException());
        }
        return w;
    }

    /** Whether a release was published since the last poll, to be reported by the next changed(). */
    synchronized boolean releaseSeenSincePoll() {
        return releasedSincePoll;
    }

    /** Abandoning only stops listening: a Redis attempt leaves nothing queued on the server. */
    @Override
    public CompletionStage<Void> abandon() {
        end();
        return CompletableFuture.completedFuture(null);
    }

    /** A release was published on this lock's channel. */
    void released() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = waiting;
            if (w == null) {
                releasedSincePoll = true;
                return;
            }
        }
        driver.calls().execute(() -> wake(w));
    }

    /** The driver closed: a pending wait fails, so the loop stops rather than waits for a timer that died. */
    void closed() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = takeWaiting();
        }
        if (w != null) {
            w.completeExceptionally(closedException());
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

    private void end() {
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
            driver.subscriptions().leave(keys.channel(), this);
        }
        if (w != null) {
            w.complete(null);
        }
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

    private static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the lock client is closed");
    }
}
