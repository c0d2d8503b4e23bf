package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockConfig;
import dev.warden.redis.internal.RedisAccess;
import dev.warden.redis.internal.RedisFailures;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.cluster.event.ClusterTopologyChangedEvent;
import io.lettuce.core.resource.ClientResources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

import reactor.core.Disposable;

/**
 * The Redis driver's lifecycle: its Lettuce client with its own resources (threads, timer) and its two
 * connections ({@link Connections}), connected within the connect timeout (once more when Lettuce lost
 * the handshake's outcome, to learn the server's refusal), the scripts loaded (except on a Cluster,
 * whose nodes load a script on its first NOSCRIPT), the calls' deadlines ({@link Calls}) and the
 * wake-up channels ({@link Subscriptions}); on a Cluster, a watch of topology changes that subscribes
 * again wherever a slot moved; and at close, the end of all of it, waiting for the client's threads.
 * {@link RedisDriver} opens and closes it.
 *
 * <p>Concurrency: every field is final and thread-safe (Lettuce's connections, the scripts);
 * {@code closed} is atomic.
 */
final class Lifecycle {

    // The driver's category, as before this class was split from it: log settings naming it still apply.
    private static final Logger log = LoggerFactory.getLogger(RedisDriver.class);

    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);

    private final String endpoint;
    private final Connections connections;
    private final Scripts scripts;
    private final Subscriptions subscriptions;
    private final Calls calls;
    private final Disposable topologyWatch;
    private final AtomicBoolean closed = new AtomicBoolean();

    private Lifecycle(LockConfig config, Topology topology, Connections connections, Scripts scripts) {
        this.endpoint = topology.describe();
        this.connections = connections;
        this.scripts = scripts;
        this.calls = new Calls(connections.resources().eventExecutorGroup(), connections.resources().timer(),
                config.requestTimeout(), endpoint, topology instanceof Topology.Cluster);
        this.subscriptions = new Subscriptions(connections.pubSub(), topology.channels(), calls);
        // A Cluster's sharded subscriptions live on the node of their slot: after a failover or a
        // resharding, subscribe again where the slot is now (until then waiters fall back on backoff).
        this.topologyWatch = topology instanceof Topology.Cluster
                ? connections.resources().eventBus().get().filter(ClusterTopologyChangedEvent.class::isInstance)
                        .subscribe(e -> subscriptions.resubscribeAll(), e -> log.debug("topology events ended", e))
                : null;
    }

    /**
     * Connects both connections (through the sentinels, or the cluster's seeds, as configured) and,
     * except on a Cluster, loads the scripts, all within the connect timeout.
     *
     * @throws LockException {@code UNAVAILABLE}, naming the endpoint, when that fails; nothing is
     *         left running
     */
    static Lifecycle open(LockConfig config) {
        Topology topology = Topology.of(config.endpoints());
        String endpoint = topology.describe();
        RedisAccess access;
        try {
            access = RedisAccess.read(RedisDriver.SETTINGS, config.options(), System::getenv);
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
    private static Lifecycle connect(LockConfig config, Topology topology, String endpoint, RedisAccess access, long deadline) {
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
            return new Lifecycle(config, topology, connections, scripts);
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

    /** The endpoint as messages name it. */
    String endpoint() {
        return endpoint;
    }

    Connections connections() {
        return connections;
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

    boolean isClosed() {
        return closed.get();
    }

    /** Closes both connections and shuts the client's threads down, waiting for them; once. */
    void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (topologyWatch != null) {
            topologyWatch.dispose();
        }
        subscriptions.close();
        shutdown(connections.client(), connections.resources());
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
