package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender for one lock: runs the acquire script, and between polls waits ({@link ChannelWait})
 * for a release message or, as a fallback for a holder that expires without releasing or a message
 * lost in a reconnect, the holder's remaining TTL capped at {@link #MAX_BACKOFF_MILLIS}.
 *
 * <p>An uncontended acquire costs one round trip: the first poll runs before any subscription.
 * Only when it finds the lock held does {@link #changed()} subscribe to the release channel, and it
 * completes as soon as the server confirms, so the loop polls again: a release between the failed
 * poll and the subscription cannot be missed. A release that arrives while no {@code changed()} is
 * pending (during a poll) is remembered, so the next {@code changed()} completes at once. A grant or
 * {@link #abandon()} ends the attempt and unsubscribes.
 *
 * <p>Concurrency: {@code holderPttl} is guarded by {@code this}; the wait guards its own state.
 */
final class RedisAttempt implements LockAttempt {

    static final long MAX_BACKOFF_MILLIS = 1000;

    private final RedisDriver driver;
    private final String name;
    private final String owner;
    private final Keys keys;
    private final ChannelWait wait;

    private long holderPttl = -1;

    RedisAttempt(RedisDriver driver, String name, String owner, Keys keys) {
        this.driver = driver;
        this.name = name;
        this.owner = owner;
        this.keys = keys;
        this.wait = new ChannelWait(driver, keys.channel(), "lock '" + name + "'");
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        long ttlMillis = RedisDriver.ttlMillis(ttl);
        if (driver.isClosed()) {
            return CompletableFuture.failedFuture(ChannelWait.closedException());
        }
        if (!wait.polling()) {
            return CompletableFuture.failedFuture(new IllegalStateException("attempt on lock '" + name + "' has ended"));
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
            wait.end();
            return Optional.of(new RedisGrant(keys, owner + ":" + value, value));
        }
        synchronized (this) {
            holderPttl = value;
        }
        return Optional.empty();
    }

    @Override
    public CompletionStage<Void> changed() {
        long pttl;
        synchronized (this) {
            pttl = holderPttl;
        }
        return wait.changed(pttl >= 0 ? Math.min(pttl + 1, MAX_BACKOFF_MILLIS) : MAX_BACKOFF_MILLIS);
    }

    /** Whether a release was published since the last poll, to be reported by the next changed(). */
    boolean releaseSeenSincePoll() {
        return wait.messageSincePoll();
    }

    /** Abandoning only stops listening: a Redis attempt leaves nothing queued on the server. */
    @Override
    public CompletionStage<Void> abandon() {
        wait.end();
        return CompletableFuture.completedFuture(null);
    }
}
