package dev.warden.quota.redis;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.redis.internal.LettuceClients;
import dev.warden.redis.internal.RedisEndpoint;
import dev.warden.redis.internal.RedisFailures;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one place that builds Redis connections for the quota engine and the ledger: its own client
 * resources and options, on whichever deployment {@code warden.quota.endpoint} names
 * ({@link RedisEndpoint}): one server, a primary found through Sentinels (asked again on every
 * reconnect, so a failover is followed), or a Cluster (topology read from the seeds before the first
 * connection, every primary connected up front, refreshed periodically and when redirections or
 * reconnects suggest it changed). Commands fail within the request timeout, and at once while
 * disconnected, rather than queue; Lettuce reconnects in the background at most
 * {@link LettuceClients#MAX_RECONNECT_DELAY} apart. Deductions from many threads queue on the I/O thread one write
 * task each, so the channel flushes once per batch of tasks rather than once per command.
 *
 * <p>Thread-safe. The list of connections is guarded by {@code this}.
 */
public final class RedisConnector implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisConnector.class);

    private final QuotaConfig config;
    private final RedisEndpoint endpoint;
    private final ClientResources resources;
    private final AbstractRedisClient client;
    private final List<RedisConnection> connections = new ArrayList<>();
    private CompletableFuture<Void> topologyRead;
    private boolean closed;

    private RedisConnector(QuotaConfig config, RedisEndpoint endpoint, ClientResources resources, AbstractRedisClient client) {
        this.config = config;
        this.endpoint = endpoint;
        this.resources = resources;
        this.client = client;
    }

    /**
     * Builds the client; connects nothing yet.
     *
     * @throws QuotaException {@link Reason#CONFIGURATION} when the endpoint is not one of the forms
     */
    public static RedisConnector create(QuotaConfig config) {
        RedisEndpoint endpoint;
        try {
            endpoint = RedisEndpoint.parse(config.endpoint());
        } catch (IllegalArgumentException e) {
            throw new QuotaException(Reason.CONFIGURATION, "invalid quota configuration: " + QuotaConfig.PREFIX
                    + "endpoint: " + e.getMessage(), e);
        }
        for (RedisURI uri : endpoint.uris()) {
            // Bounds the connection handshake (HELLO, AUTH, SELECT) and the sentinels' answer.
            uri.setTimeout(config.connectTimeout());
            config.redis().applyTo(uri);
        }
        ClientResources resources = LettuceClients.resources(null);
        AbstractRedisClient client = endpoint.kind() == RedisEndpoint.Kind.CLUSTER
                ? LettuceClients.cluster(resources, endpoint.uris(), config.redis().sslOptions(), config.connectTimeout(),
                        config.requestTimeout())
                : LettuceClients.single(resources, config.redis().sslOptions(), config.connectTimeout(),
                        config.requestTimeout());
        return new RedisConnector(config, endpoint, resources, client);
    }

    public QuotaConfig config() {
        return config;
    }

    /** {@code redis://host:port[/db]}, {@code redis-sentinel://...} or {@code redis-cluster://...}, without credentials, for messages. */
    public String endpoint() {
        return endpoint.toString();
    }

    /** Whether the endpoint is a Cluster: commands on several partitions' keys go out one per partition. */
    public boolean isCluster() {
        return endpoint.kind() == RedisEndpoint.Kind.CLUSTER;
    }

    /** Threads that are not Netty I/O threads, to complete callers' futures on. */
    public Executor executors() {
        return resources.eventExecutorGroup();
    }

    /** A new connection, closed with this connector. */
    public CompletableFuture<RedisConnection> connectAsync() {
        // Once more when Lettuce lost the handshake's outcome, so a refused password is reported as such.
        CompletableFuture<RedisConnection> connecting = attempt()
                .exceptionallyCompose(e -> RedisFailures.handshakeLost(e) ? attempt() : CompletableFuture.failedFuture(e));
        return connecting.thenApply(c -> {
            synchronized (this) {
                if (closed) {
                    c.closeAsync();
                    throw new QuotaException(Reason.CLOSED, "the Redis connector for " + endpoint + " is closed");
                }
                connections.add(c);
            }
            return c;
        });
    }

    private CompletableFuture<RedisConnection> attempt() {
        try {
            if (client instanceof RedisClusterClient cluster) {
                // A connection whose primaries could not all be reached is closed, not left open until the connector closes.
                return readTopology(cluster).thenCompose(v -> cluster.connectAsync(StringCodec.UTF8))
                        .thenCompose(c -> toEveryPrimary(c).whenComplete((ok, e) -> {
                            if (e != null) {
                                c.closeAsync();
                            }
                        }))
                        .thenApply(RedisConnection::new);
            }
            return ((RedisClient) client).connectAsync(StringCodec.UTF8, endpoint.uris().get(0)).toCompletableFuture()
                    .thenApply(RedisConnection::new);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The Cluster's topology, read once from the seeds before the first connection. */
    private synchronized CompletableFuture<Void> readTopology(RedisClusterClient cluster) {
        if (topologyRead == null || topologyRead.isCompletedExceptionally()) {
            topologyRead = cluster.refreshPartitionsAsync().toCompletableFuture();
        }
        return topologyRead;
    }

    /**
     * Connects to every primary now rather than at its first command (which Lettuce rejects while
     * connecting): by address, as commands routed by slot reach it, and by node id, as a cluster-wide
     * SCAN and {@link RedisConnection#primaries()} do.
     */
    private static CompletableFuture<StatefulRedisClusterConnection<String, String>> toEveryPrimary(
            StatefulRedisClusterConnection<String, String> connection) {
        List<CompletableFuture<?>> nodes = new ArrayList<>();
        for (RedisClusterNode n : connection.getPartitions()) {
            if (n.is(RedisClusterNode.NodeFlag.UPSTREAM) && !n.getSlots().isEmpty()) {
                nodes.add(connection.getConnectionAsync(n.getUri().getHost(), n.getUri().getPort()));
                nodes.add(connection.getConnectionAsync(n.getNodeId()));
            }
        }
        return CompletableFuture.allOf(nodes.toArray(CompletableFuture[]::new)).thenApply(v -> connection);
    }

    /**
     * A new connection, within the connect timeout, closed with this connector.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot be reached
     */
    public RedisConnection connect() {
        try {
            return connectAsync().get(config.connectTimeout().toNanos() + TimeUnit.SECONDS.toNanos(1), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while connecting to Redis at " + endpoint, e);
        } catch (TimeoutException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint + " within "
                    + config.connectTimeout().toMillis() + " ms", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof QuotaException q) {
                throw q;
            }
            String refusal = RedisFailures.denial(cause);
            if (refusal != null) {
                throw RedisRefusal.accessDenied(endpoint.toString(), "the connection", refusal, cause);
            }
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint + ": "
                    + cause.getMessage(), cause);
        }
    }

    /**
     * {@link #checkEvictionPolicy(String)} on every primary ({@code INFO memory} of each).
     *
     * @throws QuotaException {@link Reason#CONFIGURATION} naming the setting
     */
    public void checkEvictionPolicy(RedisConnection connection) {
        for (var primary : connection.primaries()) {
            checkEvictionPolicy(primary.sync().info("memory"));
        }
    }

    /**
     * Refuses a server whose {@code maxmemory-policy} can evict quota keys: {@code allkeys-*} may drop
     * accounts, journal entries and idempotency records; {@code volatile-*} drops idempotency records
     * (they carry a TTL) before their retention, so a late retry would be applied twice. Read from
     * {@code INFO memory}, which an ACL user without {@code CONFIG} may still run. With
     * {@code warden.quota.allow-eviction=true} such a policy is logged as a warning instead.
     *
     * @param infoMemory the text of {@code INFO memory}
     * @throws QuotaException {@link Reason#CONFIGURATION} naming the setting
     */
    public void checkEvictionPolicy(String infoMemory) {
        String policy = infoField(infoMemory, "maxmemory_policy");
        if (policy == null || policy.equals("noeviction")) {
            return;
        }
        String what = policy.startsWith("volatile-")
                ? "evicts idempotency records (they expire) before their retention, so a late retry would be applied twice"
                : "can evict quota accounts, journal entries and idempotency records without a trace";
        if (config.allowEviction()) {
            log.warn("Redis at {} runs with maxmemory-policy {}, which {}; allowed by {}allow-eviction=true", endpoint,
                    policy, what, QuotaConfig.PREFIX);
            return;
        }
        throw new QuotaException(Reason.CONFIGURATION, "Redis at " + endpoint + " runs with maxmemory-policy " + policy
                + ", which " + what + ": set maxmemory-policy noeviction on the server, or accept the risk with "
                + QuotaConfig.PREFIX + "allow-eviction=true");
    }

    /** One {@code name:value} line of an {@code INFO} reply, or null. */
    public static String infoField(String info, String name) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(name + ":")) {
                return line.substring(name.length() + 1).trim().toLowerCase(Locale.ROOT);
            }
        }
        return null;
    }

    /**
     * Closes one connection this connector made, leaving the client and its other connections open: for a
     * user of a connector it does not own (a quota service over the ledger's connector, say).
     */
    public void disconnect(RedisConnection connection) {
        synchronized (this) {
            if (!connections.remove(connection)) {
                return;
            }
        }
        try {
            connection.close();
        } catch (RuntimeException e) {
            log.debug("closing a Redis connection failed", e);
        }
    }

    /** Closes every connection, the client and its threads. Idempotent. */
    @Override
    public void close() {
        List<RedisConnection> open;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            open = new ArrayList<>(connections);
            connections.clear();
        }
        for (RedisConnection c : open) {
            try {
                c.close();
            } catch (RuntimeException e) {
                log.debug("closing a Redis connection failed", e);
            }
        }
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            log.warn("closing the Redis client failed", e);
        }
        try {
            resources.shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | RuntimeException e) {
            log.warn("shutting the Redis client's threads down failed", e);
        }
    }
}
