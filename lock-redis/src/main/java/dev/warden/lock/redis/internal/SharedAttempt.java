package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender for a share of a shared name: one entry in the name's queue ({@link SharedKeys}), entered
 * by the first poll and kept alive by the later ones. Each poll is one script call that removes expired
 * entries ahead, refreshes the entry's expiry and grants it when it fits behind the entries ahead.
 *
 * <p>Between polls it waits ({@link ChannelWait}) for a message on the name's channel (a release, an
 * abandon, an expired entry removed) or a fallback: the soonest expiry among the entries ahead, and at
 * most {@link #refreshMillis}, well under a third of the TTL, so the entry of a live waiter never expires.
 * An uncontended poll costs one round trip, before any subscription. A grant ends the wait; an abandon
 * ends it and removes the entry, which wakes the attempts behind it. A poll that answers after its
 * deadline removes the entry it made or refreshed, granted or not: the loop never sees it and abandons.
 *
 * <p>Concurrency: {@code polled} and {@code soonestExpiry} and {@code refresh} are guarded by
 * {@code this}; the wait guards its own state.
 */
final class SharedAttempt implements LockAttempt {

    /** How many refreshes a waiting entry's TTL covers at least. */
    static final long REFRESHES_PER_TTL = 5;

    private final RedisDriver driver;
    private final String name;
    private final Share share;
    private final SharedKeys keys;
    private final String id;
    private final ChannelWait wait;

    private boolean polled;
    private long soonestExpiry = -1;
    private long refresh = RedisAttempt.MAX_BACKOFF_MILLIS;

    SharedAttempt(RedisDriver driver, String name, Share share, SharedKeys keys, String id) {
        this.driver = driver;
        this.name = name;
        this.share = share;
        this.keys = keys;
        this.id = id;
        this.wait = new ChannelWait(driver, keys.channel(), "shared name '" + name + "'");
    }

    /** The longest wait between two polls of a waiting entry under {@code ttlMillis}: at most a second. */
    static long refreshMillis(long ttlMillis) {
        return Math.max(1, Math.min(RedisAttempt.MAX_BACKOFF_MILLIS, ttlMillis / REFRESHES_PER_TTL));
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        long ttlMillis = RedisDriver.ttlMillis(ttl);
        if (driver.isClosed()) {
            return CompletableFuture.failedFuture(ChannelWait.closedException());
        }
        if (!wait.polling()) {
            return CompletableFuture.failedFuture(new IllegalStateException("attempt on shared name '" + name + "' has ended"));
        }
        synchronized (this) {
            polled = true;
            refresh = refreshMillis(ttlMillis);
        }
        return driver.calls().retrying("the shared poll script for '" + name + "'",
                () -> driver.scripts().sharedPoll(keys, id, share.weight(), share.limit(), ttlMillis).thenApply(this::granted),
                late -> driver.shares().leaveQuietly(keys, id));
    }

    private Optional<Grant> granted(List<Object> reply) {
        if (reply == null || reply.size() != 3 || !(reply.get(0) instanceof Long flag) || !(reply.get(1) instanceof Long token)
                || !(reply.get(2) instanceof Long soonest)) {
            throw new LockException(LockException.Reason.PROTOCOL, "unexpected reply to the shared poll script for '"
                    + name + "': " + reply);
        }
        if (flag == 1L) {
            wait.end();
            return Optional.of(new SharedGrant(keys, id, token));
        }
        synchronized (this) {
            soonestExpiry = soonest;
        }
        return Optional.empty();
    }

    @Override
    public CompletionStage<Void> changed() {
        long delay;
        synchronized (this) {
            delay = soonestExpiry >= 0 ? Math.min(soonestExpiry + 1, refresh) : refresh;
        }
        return wait.changed(delay);
    }

    /** Whether a change was published since the last poll, to be reported by the next changed(). */
    boolean changeSeenSincePoll() {
        return wait.messageSincePoll();
    }

    /** Stops listening and removes the entry, whatever token it has now; those behind are woken. */
    @Override
    public CompletionStage<Void> abandon() {
        wait.end();
        synchronized (this) {
            if (!polled) {
                return CompletableFuture.completedFuture(null);
            }
        }
        if (driver.isClosed()) {
            // Nothing can be sent: the entry expires within its TTL.
            return CompletableFuture.completedFuture(null);
        }
        return driver.shares().leave(keys, id);
    }
}
