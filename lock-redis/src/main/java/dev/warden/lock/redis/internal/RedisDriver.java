package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.HandOffDriver;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import dev.warden.redis.internal.RedisAccess;
import dev.warden.redis.internal.RedisFailures;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.resource.ClientResources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.Disposable;

/**
 * The Redis driver: one Lettuce client with its own resources (threads, timer), one connection for
 * scripts and one pub/sub connection for release messages, on one server, a Sentinel-found primary or
 * a Cluster ({@link Connections}). Commands fail within the request timeout and fail at once while
 * disconnected rather than queue, so lock-api hears of an outage instead of waiting on it; Lettuce
 * reconnects in the background, at most {@link dev.warden.redis.internal.LettuceClients#MAX_RECONNECT_DELAY} apart, and
 * resubscribes; on a Cluster the driver also subscribes again wherever a topology change moved a slot.
 * Shared names (semaphores, read-write locks) are {@link Shares}' business: their grants are
 * {@link SharedGrant}s, dispatched there; the operator's features (holders, eviction, token floor)
 * cover locks only.
 *
 * <p>Concurrency: every field is final and thread-safe (Lettuce's connections, the scripts);
 * {@code closed} is atomic.
 */
public final class RedisDriver implements HandOffDriver, TokenFloorDriver, EpochRecordingDriver, HolderEvictingDriver,
        HolderListingDriver, SharedLockDriver {

    /** Where the backend's own settings live ({@code warden.lock.redis.username}, ...). */
    public static final String SETTINGS = "warden.lock.redis.";
    private static final Logger log = LoggerFactory.getLogger(RedisDriver.class);

    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);

    private final String namespace;
    private final Duration ttl;
    private final String endpoint;
    private final Connections connections;
    private final Scripts scripts;
    private final Subscriptions subscriptions;
    private final Calls calls;
    private final Shares shares;
    private final Disposable topologyWatch;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisDriver(LockConfig config, Topology topology, Connections connections, Scripts scripts) {
        this.namespace = config.namespace();
        this.ttl = config.ttl();
        this.endpoint = topology.describe();
        this.connections = connections;
        this.scripts = scripts;
        this.calls = new Calls(connections.resources().eventExecutorGroup(), connections.resources().timer(),
                config.requestTimeout(), endpoint, topology instanceof Topology.Cluster);
        this.subscriptions = new Subscriptions(connections.pubSub(), topology.channels(), calls);
        this.shares = new Shares(this, namespace);
        // A Cluster's sharded subscriptions live on the node of their slot: after a failover or a
        // resharding, subscribe again where the slot is now (until then waiters fall back on backoff).
        this.topologyWatch = topology instanceof Topology.Cluster
                ? connections.resources().eventBus().get().filter(ClusterTopologyChangedEvent.class::isInstance)
                        .subscribe(e -> subscriptions.resubscribeAll(), e -> log.debug("topology events ended", e))
                : null;
    }

    /**
     * Connects both connections (through the sentinels, or the cluster's seeds, as configured) and,
     * except on a Cluster (whose nodes load a script on its first NOSCRIPT), loads the scripts, all
     * within the connect timeout.
     *
     * @throws LockException {@code UNAVAILABLE}, naming the endpoint, when that fails; nothing is
     *         left running
     */
    public static RedisDriver open(LockConfig config) {
        Topology topology = Topology.of(config.endpoints());
        String endpoint = topology.describe();
        RedisAccess access;
        try {
            access = RedisAccess.read(SETTINGS, config.options(), System::getenv);
        } catch (IllegalArgumentException e) {
            throw new LockException(LockException.Reason.CONFIGURATION, "invalid Redis lock configuration: " + e.getMessage());
        }
        if (topology instanceof Topology.Standalone s) {
            access.applyTo(s.uri());
        } else if (topology instanceof Topology.Sentinel s) {
            access.applyTo(s.uri()); // and the sentinels' own login on its sentinels
        } else if (topology instanceof Topology.Cluster c) {
            c.seeds().forEach(access::applyTo);
        }
        long deadline = System.nanoTime() + config.connectTimeout().toNanos();
        try {
            return connect(config, topology, endpoint, access, deadline);
        } catch (LockException e) {
            if (!RedisFailures.handshakeLost(e) || left(deadline) <= 0) {
                throw e;
            }
            // Lettuce lost the handshake's outcome (the server's refusal among it): once more, to learn it.
            log.debug("the connection handshake to Redis at {} ended before Lettuce read its outcome; connecting once more", endpoint);
            return connect(config, topology, endpoint, access, deadline);
        }
    }

    /** One attempt to connect both connections and load the scripts by {@code deadline}. */
    private static RedisDriver connect(LockConfig config, Topology topology, String endpoint, RedisAccess access, long deadline) {
        Duration connectTimeout = Duration.ofNanos(Math.max(TimeUnit.MILLISECONDS.toNanos(1), left(deadline)));
        ClientResources resources = Connections.resources(AddressMap.parse(
                config.option(AddressMap.OPTION).orElse(null), new java.util.ArrayList<>()));
        Connections.Opening opening;
        try {
            opening = Connections.open(topology, resources, connectTimeout, config.requestTimeout(), access.sslOptions());
        } catch (RuntimeException e) {
            shutdownResources(resources);
            // A handshake refused at once (a wrong password) can fail here, before there is anything to await.
            String denied = RedisFailures.denial(e);
            if (denied != null) {
                throw Calls.accessDenied(endpoint, "the connection", denied, e);
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + ": " + e.getMessage(), e);
        }
        try {
            Connections connections = opening.await(deadline);
            Scripts scripts = new Scripts(connections.scripting(), topology.channels());
            if (!(topology instanceof Topology.Cluster)) {
                scripts.loadAll().get(left(deadline), TimeUnit.NANOSECONDS);
            }
            return new RedisDriver(config, topology, connections, scripts);
        } catch (InterruptedException e) {
            shutdown(opening.client(), resources);
            throw LockException.interrupted("interrupted while connecting to Redis at " + endpoint, e);
        } catch (TimeoutException e) {
            shutdown(opening.client(), resources);
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + " within " + config.connectTimeout().toMillis() + " ms", e);
        } catch (Exception e) {
            shutdown(opening.client(), resources);
            Throwable cause = RedisFailures.unwrap(e);
            String denied = RedisFailures.denial(cause);
            if (denied != null) {
                // Lettuce says "Unable to connect"; the server's WRONGPASS or NOAUTH is the news.
                throw Calls.accessDenied(endpoint, "the connection", denied, cause);
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + ": " + cause.getMessage() + tlsHint(cause, endpoint.startsWith("rediss")), cause);
        }
    }

    /** What a TLS failure, buried under Lettuce's "Unable to connect", means for the settings. */
    private static String tlsHint(Throwable error, boolean tls) {
        String failed = RedisFailures.tlsFailure(error);
        if (failed != null) {
            return "; the TLS handshake failed (" + failed + "): check that warden.lock.redis.tls.trust-store"
                    + " holds the CA of the server's certificate and, where the server requires client certificates,"
                    + " that tls.key-store holds one it accepts";
        }
        Throwable last = error;
        while (last.getCause() != null && last.getCause() != last) {
            last = last.getCause();
        }
        if (!tls && last instanceof java.io.IOException && last.getMessage() != null
                && (last.getMessage().contains("reset") || last.getMessage().contains("closed"))) {
            return "; " + last.getMessage() + " (a TLS port closes a plaintext client's connection: is it rediss://?)";
        }
        return "";
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        checkOpen();
        return new RedisAttempt(this, name, owner, Keys.of(namespace, name));
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

    /** One script call reading the lock key: its value is {@code owner:token}. */
    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        checkOpen();
        Keys keys = Keys.of(namespace, name);
        return calls.retrying("the read script for " + keys.lock(), () -> scripts.read(keys.lock()).thenApply(RedisDriver::holderOf),
                late -> { });
    }

    /** One script: compare-and-delete by token, the evicted mark for twice the TTL, the release published. */
    @Override
    public CompletionStage<Boolean> evict(String name, long token) {
        checkOpen();
        Keys keys = Keys.of(namespace, name);
        return calls.retrying("the evict script for " + keys.lock(),
                () -> scripts.evict(keys, token, 2 * ttl.toMillis()).thenApply(RedisDriver::isOne), late -> { });
    }

    /** Operators evict locks, not shares: a shared grant was never evicted. */
    @Override
    public CompletionStage<Boolean> evicted(Grant grant) {
        if (grant instanceof SharedGrant) {
            return CompletableFuture.completedFuture(false);
        }
        RedisGrant g = RedisGrant.of(grant);
        checkOpen();
        return calls.retrying("the read script for " + g.keys().evicted(), () -> scripts.read(g.keys().evicted())
                .thenApply(mark -> Long.toString(g.fencingToken()).equals(mark)), late -> { });
    }

    /**
     * A bounded SCAN of the namespace's lock keys, then one read per key ({@link HolderScan}); shared
     * names' keys never match, so semaphores and read-write locks are not listed.
     */
    @Override
    public CompletionStage<List<NamedHolder>> holders(Duration limit) {
        checkOpen();
        String what = "listing the holders of namespace '" + namespace + "' (SCAN, then a read per lock key;"
                + " the operator's ACL user needs +scan)";
        CompletableFuture<List<NamedHolder>> listed = HolderScan.holders(connections.commands(), scripts, namespace,
                RedisDriver::holderOf);
        return listed.orTimeout(limit.toMillis(), TimeUnit.MILLISECONDS).handle((holders, error) -> {
            if (error != null) {
                throw calls.translate(what, error);
            }
            return holders;
        });
    }

    private static Optional<Holder> holderOf(String value) {
        if (value == null) {
            return Optional.empty();
        }
        int colon = value.lastIndexOf(':');
        try {
            return Optional.of(new Holder(value.substring(0, colon), Long.parseLong(value.substring(colon + 1))));
        } catch (RuntimeException e) {
            throw new LockException(LockException.Reason.PROTOCOL, "a lock key holds '" + value
                    + "', not owner:token: is another program writing Warden's keys?");
        }
    }

    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        RedisGrant g = RedisGrant.of(grant);
        checkOpen();
        return calls.retrying("the floor script for " + g.keys().lock(),
                () -> scripts.raiseFloor(g.keys(), g.value(), floor).thenApply(RedisDriver::isOne), late -> { });
    }

    /**
     * One key per namespace, {@code {<namespace>:}:epoch}: inside the documented ACL key pattern (the
     * namespace's tag, open, and a star), and no lock's key (tagged {@code {<namespace>:<name>}}, names never empty).
     */
    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        checkOpen();
        String key = "{" + namespace + ":}:epoch";
        return calls.retrying("the epoch script for " + key, () -> scripts.recordEpoch(key, epoch).thenApply(Long::intValue),
                late -> { });
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
        if (grant instanceof SharedGrant) {
            return release(grant).thenApply(removed -> removed ? HandOff.releasedOnly() : HandOff.notOwner());
        }
        RedisGrant g = RedisGrant.of(grant);
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        return calls.retrying("the hand-off script for " + g.keys().lock(),
                () -> scripts.handOff(g.keys(), g.value(), owner, ttlMillis).thenApply(reply -> handedOff(g, owner, reply)),
                late -> {
                    if (late instanceof HandOff.To to) {
                        releaseQuietly(to.next());
                    }
                });
    }

    private static HandOff handedOff(RedisGrant from, String owner, List<Object> reply) {
        if (reply == null || reply.size() != 2 || !(reply.get(0) instanceof Long outcome) || !(reply.get(1) instanceof Long token)) {
            throw new LockException(LockException.Reason.PROTOCOL, "unexpected reply to the hand-off script for "
                    + from.keys().lock() + ": " + reply);
        }
        return switch (outcome.intValue()) {
            case 1 -> HandOff.to(new RedisGrant(from.keys(), owner + ":" + token, token));
            case 2 -> HandOff.releasedOnly();
            default -> HandOff.notOwner();
        };
    }

    /** Closes both connections and shuts the client's threads down, waiting for them. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (topologyWatch != null) {
            topologyWatch.dispose();
        }
        subscriptions.close();
        shutdown(connections.client(), connections.resources());
    }

    boolean isClosed() {
        return closed.get();
    }

    Scripts scripts() {
        return scripts;
    }

    Subscriptions subscriptions() {
        return subscriptions;
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

    static long ttlMillis(Duration ttl) {
        long millis = ttl.toMillis();
        if (millis < 1) {
            throw new IllegalArgumentException("TTL must be at least 1 ms, was " + ttl);
        }
        return millis;
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

    private static boolean isOne(Long reply) {
        return reply != null && reply == 1L;
    }

    private static long left(long deadlineNanos) {
        return Math.max(0, deadlineNanos - System.nanoTime());
    }

    private static void shutdown(AbstractRedisClient client, ClientResources resources) {
        long timeout = SHUTDOWN_TIMEOUT.toMillis();
        try {
            client.shutdown(0, timeout, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            log.debug("Redis client shutdown failed", e);
        }
        shutdownResources(resources);
    }

    private static void shutdownResources(ClientResources resources) {
        long timeout = SHUTDOWN_TIMEOUT.toMillis();
        try {
            if (!resources.shutdown(0, timeout, TimeUnit.MILLISECONDS).await(2 * timeout, TimeUnit.MILLISECONDS)) {
                log.warn("Redis client threads did not stop within {} ms", 2 * timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
