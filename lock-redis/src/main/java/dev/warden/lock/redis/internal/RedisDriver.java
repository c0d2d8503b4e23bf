package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenBlockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The Redis driver: one Lettuce client with its own resources (threads, timer), one connection for
 * scripts and one pub/sub connection for release messages, on one server, a Sentinel-found primary or
 * a Cluster ({@link Connections}), opened and closed by its {@link Lifecycle}. Commands fail within the
 * request timeout and fail at once while disconnected rather than queue, so lock-api hears of an outage
 * instead of waiting on it; Lettuce reconnects in the background, at most
 * {@link dev.warden.redis.internal.LettuceClients#MAX_RECONNECT_DELAY} apart, and resubscribes; on a
 * Cluster the driver also subscribes again wherever a topology change moved a slot. Shared names
 * (semaphores, read-write locks) are {@link Shares}' business: their grants are {@link SharedGrant}s,
 * dispatched there; the operator's features (holders, eviction, token floor, epoch) are
 * {@link Operator}'s and cover locks only.
 *
 * <p>Concurrency: every field is final and thread-safe (Lettuce's connections, the scripts); the
 * lifecycle's {@code closed} is atomic.
 */
public final class RedisDriver implements TokenBlockDriver, TokenFloorDriver, EpochRecordingDriver, HolderEvictingDriver,
        HolderListingDriver, SharedLockDriver {

    /** Where the backend's own settings live ({@code warden.lock.redis.username}, ...). */
    public static final String SETTINGS = "warden.lock.redis.";
    private static final Logger log = LoggerFactory.getLogger(RedisDriver.class);
    /** The most tokens one grant may reserve; the scripts refuse more. */
    static final int MAX_RESERVED_TOKENS = 1_000_000;

    private final String namespace;
    private final String endpoint;
    private final Lifecycle lifecycle;
    private final Scripts scripts;
    private final Calls calls;
    private final Shares shares;
    private final Operator operator;

    private RedisDriver(LockConfig config, Lifecycle lifecycle) {
        this.namespace = config.namespace();
        this.endpoint = lifecycle.endpoint();
        this.lifecycle = lifecycle;
        this.scripts = lifecycle.scripts();
        this.calls = lifecycle.calls();
        this.shares = new Shares(this, namespace);
        this.operator = new Operator(namespace, config.ttl(), calls, scripts, lifecycle.connections());
    }

    /**
     * Connects both connections (through the sentinels, or the cluster's seeds, as configured) and,
     * except on a Cluster (whose nodes load a script on its first NOSCRIPT), loads the scripts, all
     * within the connect timeout ({@link Lifecycle#open}).
     *
     * @throws LockException {@code UNAVAILABLE}, naming the endpoint, when that fails; nothing is
     *         left running
     */
    public static RedisDriver open(LockConfig config) {
        return new RedisDriver(config, Lifecycle.open(config));
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        checkOpen();
        return new RedisAttempt(this, name, owner, Keys.of(namespace, name), 1);
    }

    /** The acquire script sets the fence to the block's last token ({@code acquire.lua}). */
    @Override
    public LockAttempt attemptReserving(String name, String owner, int tokens) {
        checkTokens(tokens);
        checkOpen();
        return new RedisAttempt(this, name, owner, Keys.of(namespace, name), tokens);
    }

    /** The scripts cut a block short so that the fence stays within 1 ms of the server's clock. */
    @Override
    public long lastReserved(Grant grant) {
        return RedisGrant.of(grant).lastReserved();
    }

    /** Every acquire that finds the lock held publishes on its contender channel; a watch subscribes there. */
    @Override
    public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
        checkOpen();
        String channel = Keys.of(namespace, name).contenders();
        Subscriptions.Listener listener = new Subscriptions.Listener() {
            @Override
            public void message() {
                asked.run();
            }

            @Override
            public void closed() {
            }
        };
        ContenderWatch watch = () -> subscriptions().leave(channel, listener);
        return calls.bounded("the contender watch of lock '" + name + "'", subscriptions().join(channel, listener))
                .handle((v, error) -> {
                    if (error != null) {
                        watch.close();
                        throw error instanceof CompletionException c ? c : new CompletionException(error);
                    }
                    return watch;
                });
    }

    @Override
    public LockAttempt attemptShared(String name, String owner, Share share) {
        checkOpen();
        return shares.attempt(name, owner, share);
    }

    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        if (grant instanceof SharedGrant s) {
            long ttlMillis = ttlMillis(ttl);
            checkOpen();
            return shares.renew(s, ttlMillis);
        }
        RedisGrant g = RedisGrant.of(grant);
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        return calls.retrying("the renew script for " + g.keys().lock(),
                () -> scripts.renew(g.keys(), g.value(), ttlMillis).thenApply(RedisDriver::isOne), late -> { });
    }

    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        checkOpen();
        return operator.holder(name);
    }

    @Override
    public CompletionStage<Boolean> evict(String name, long token) {
        checkOpen();
        return operator.evict(name, token);
    }

    /** Operators evict locks, not shares: a shared grant was never evicted. */
    @Override
    public CompletionStage<Boolean> evicted(Grant grant) {
        if (grant instanceof SharedGrant) {
            return CompletableFuture.completedFuture(false);
        }
        RedisGrant g = RedisGrant.of(grant);
        checkOpen();
        return operator.evicted(g);
    }

    @Override
    public CompletionStage<List<NamedHolder>> holders(Duration limit) {
        checkOpen();
        return operator.holders(limit);
    }

    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        RedisGrant g = RedisGrant.of(grant);
        checkOpen();
        return operator.raiseTokenFloor(g, floor);
    }

    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        checkOpen();
        return operator.recordEpoch(epoch);
    }

    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        if (grant instanceof SharedGrant s) {
            checkOpen();
            return shares.release(s);
        }
        RedisGrant g = RedisGrant.of(grant);
        checkOpen();
        return calls.retrying("the release script for " + g.keys().lock(),
                () -> scripts.release(g.keys(), g.value()).thenApply(RedisDriver::isOne), late -> { });
    }

    /** A shared grant is only released: its name has no one-step hand-off. */
    @Override
    public CompletionStage<HandOff> handOff(Grant grant, String owner, Duration ttl) {
        return handOffReserving(grant, owner, ttl, 1);
    }

    @Override
    public CompletionStage<HandOff> handOffReserving(Grant grant, String owner, Duration ttl, int tokens) {
        checkTokens(tokens);
        if (grant instanceof SharedGrant) {
            return release(grant).thenApply(removed -> removed ? HandOff.releasedOnly() : HandOff.notOwner());
        }
        RedisGrant g = RedisGrant.of(grant);
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        return calls.retrying("the hand-off script for " + g.keys().lock(),
                () -> scripts.handOff(g.keys(), g.value(), owner, ttlMillis, tokens).thenApply(reply -> handedOff(g, owner, reply)),
                late -> {
                    if (late instanceof HandOff.To to) {
                        releaseQuietly(to.next());
                    }
                });
    }

    private static HandOff handedOff(RedisGrant from, String owner, List<Object> reply) {
        if (reply == null || reply.size() != 3 || !(reply.get(0) instanceof Long outcome) || !(reply.get(1) instanceof Long token)
                || !(reply.get(2) instanceof Long last)) {
            throw new LockException(LockException.Reason.PROTOCOL, "unexpected reply to the hand-off script for "
                    + from.keys().lock() + ": " + reply);
        }
        return switch (outcome.intValue()) {
            case 1 -> HandOff.to(new RedisGrant(from.keys(), owner + ":" + token, token, last));
            case 2 -> HandOff.releasedOnly();
            default -> HandOff.notOwner();
        };
    }

    /** Closes both connections and shuts the client's threads down, waiting for them ({@link Lifecycle#close}). */
    @Override
    public void close() {
        lifecycle.close();
    }

    boolean isClosed() {
        return lifecycle.isClosed();
    }

    Scripts scripts() {
        return scripts;
    }

    Subscriptions subscriptions() {
        return lifecycle.subscriptions();
    }

    Calls calls() {
        return calls;
    }

    Shares shares() {
        return shares;
    }

    /** Gives back a grant nobody will see (it arrived after its poll's deadline). */
    void releaseQuietly(Grant grant) {
        if (isClosed()) {
            return;
        }
        RedisGrant g = RedisGrant.of(grant);
        scripts.release(g.keys(), g.value()).whenComplete((removed, error) -> {
            if (error != null) {
                log.warn("could not release {} granted after its poll timed out; it expires within its TTL",
                        g.keys().lock(), error);
            }
        });
    }

    private static void checkTokens(int tokens) {
        if (tokens < 1 || tokens > MAX_RESERVED_TOKENS) {
            throw new IllegalArgumentException("a grant reserves 1 to " + MAX_RESERVED_TOKENS + " tokens, not " + tokens);
        }
    }

    static long ttlMillis(Duration ttl) {
        long millis = ttl.toMillis();
        if (millis < 1) {
            throw new IllegalArgumentException("TTL must be at least 1 ms, was " + ttl);
        }
        return millis;
    }

    /** Whether a script answered 1 (done). */
    static boolean isOne(Long reply) {
        return reply != null && reply == 1L;
    }

    @Override
    public String toString() {
        return "RedisDriver[" + endpoint + "]";
    }

    private void checkOpen() {
        if (isClosed()) {
            throw new LockException(LockException.Reason.CLOSED, "the Redis lock driver for " + endpoint + " is closed");
        }
    }
}
