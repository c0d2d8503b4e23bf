package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;

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
 * {@link #abandon()} ends the attempt and unsubscribes. The poll's guards, the wait and the abandon
 * are {@link ChannelAttempt}'s; this class keeps the acquire script and its reply.
 *
 * <p>Concurrency: every field of its own is final; the holder's remaining TTL is {@link ChannelAttempt}'s,
 * guarded by {@code this}; the wait guards its own state.
 */
final class RedisAttempt extends ChannelAttempt {

    static final long MAX_BACKOFF_MILLIS = 1000;

    private final String owner;
    private final Keys keys;
    /** How many fencing tokens a grant reserves: 1, or a lease-caching client's block. */
    private final int tokens;

    RedisAttempt(RedisDriver driver, String name, String owner, Keys keys, int tokens) {
        super(driver, "lock", name, keys.channel(), MAX_BACKOFF_MILLIS);
        this.owner = owner;
        this.keys = keys;
        this.tokens = tokens;
    }

    @Override
    CompletionStage<Optional<Grant>> send(long ttlMillis) {
        return driver.calls().retrying("the acquire script for lock '" + name + "'",
                () -> driver.scripts().acquire(keys, owner, ttlMillis, tokens).thenApply(this::outcome),
                late -> late.ifPresent(driver::releaseQuietly));
    }

    /** The reply: granted and the token, or not and the holder's remaining TTL. */
    private Optional<Grant> outcome(List<Object> reply) {
        if (reply == null || reply.size() != 3 || !(reply.get(0) instanceof Long flag) || !(reply.get(1) instanceof Long value)
                || !(reply.get(2) instanceof Long last)) {
            throw new LockException(LockException.Reason.PROTOCOL, "unexpected reply to the acquire script for lock '"
                    + name + "': " + reply);
        }
        return flag == 1L ? granted(new RedisGrant(keys, owner + ":" + value, value, last)) : refused(value);
    }

    /** Whether a release was published since the last poll, to be reported by the next changed(). */
    boolean releaseSeenSincePoll() {
        return wait.messageSincePoll();
    }

    /** Abandoning only stops listening: a Redis attempt leaves nothing queued on the server. */
    @Override
    CompletionStage<Void> leave() {
        return CompletableFuture.completedFuture(null);
    }
}
