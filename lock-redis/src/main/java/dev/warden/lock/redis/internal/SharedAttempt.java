package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.Share;

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
 * The poll's guards, the wait and the abandon's start are {@link ChannelAttempt}'s, as a lock's.
 *
 * <p>Concurrency: {@code polled} is guarded by {@code this}, and so are the soonest expiry and the
 * refresh, {@link ChannelAttempt}'s; the wait guards its own state.
 */
final class SharedAttempt extends ChannelAttempt {

    /** How many refreshes a waiting entry's TTL covers at least. */
    static final long REFRESHES_PER_TTL = 5;

    private final Share share;
    private final SharedKeys keys;
    private final String id;

    private boolean polled;

    SharedAttempt(RedisDriver driver, String name, Share share, SharedKeys keys, String id) {
        super(driver, "shared name", name, keys.channel(), RedisAttempt.MAX_BACKOFF_MILLIS);
        this.share = share;
        this.keys = keys;
        this.id = id;
    }

    /** The longest wait between two polls of a waiting entry under {@code ttlMillis}: at most a second. */
    static long refreshMillis(long ttlMillis) {
        return Math.max(1, Math.min(RedisAttempt.MAX_BACKOFF_MILLIS, ttlMillis / REFRESHES_PER_TTL));
    }

    @Override
    CompletionStage<Optional<Grant>> send(long ttlMillis) {
        synchronized (this) {
            polled = true;
            cap(refreshMillis(ttlMillis));
        }
        return driver.calls().retrying("the shared poll script for '" + name + "'",
                () -> driver.scripts().sharedPoll(keys, id, share.weight(), share.limit(), ttlMillis).thenApply(this::outcome),
                late -> driver.shares().leaveQuietly(keys, id));
    }

    /** The reply: granted or not, the entry's token, and the soonest expiry among the entries ahead. */
    private Optional<Grant> outcome(List<Object> reply) {
        if (reply == null || reply.size() != 3 || !(reply.get(0) instanceof Long flag) || !(reply.get(1) instanceof Long token)
                || !(reply.get(2) instanceof Long soonest)) {
            throw new LockException(LockException.Reason.PROTOCOL, "unexpected reply to the shared poll script for '"
                    + name + "': " + reply);
        }
        return flag == 1L ? granted(new SharedGrant(keys, id, token)) : refused(soonest);
    }

    /** Whether a change was published since the last poll, to be reported by the next changed(). */
    boolean changeSeenSincePoll() {
        return wait.messageSincePoll();
    }

    /** Removes the entry, whatever token it has now; those behind are woken. */
    @Override
    CompletionStage<Void> leave() {
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
