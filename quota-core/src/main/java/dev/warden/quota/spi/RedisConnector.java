package dev.warden.quota.spi;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
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
 * resources and options. Commands fail within the request timeout, and at once while disconnected,
 * rather than queue; Lettuce reconnects in the background at most {@link #MAX_RECONNECT_DELAY} apart.
 * Deductions from many threads queue on the I/O thread one write task each, so the channel flushes
 * once per batch of tasks rather than once per command.
 *
 * <p>Thread-safe. The list of connections is guarded by {@code this}.
 */
public final class RedisConnector implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisConnector.class);

    /** The longest pause between reconnection attempts. */
    public static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);

    private final QuotaConfig config;
    private final RedisURI uri;
    private final String endpoint;
    private final ClientResources resources;
    private final RedisClient client;
    private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
    private boolean closed;

    private RedisConnector(QuotaConfig config, RedisURI uri, String endpoint, ClientResources resources, RedisClient client) {
        this.config = config;
        this.uri = uri;
        this.endpoint = endpoint;
        this.resources = resources;
        this.client = client;
    }

    /**
     * Builds the client; connects nothing yet.
     *
     * @throws QuotaException {@link Reason#CONFIGURATION} when the endpoint is not a Redis URI
     */
    public static RedisConnector create(QuotaConfig config) {
        RedisURI uri;
        try {
            uri = RedisURI.create(config.endpoint());
        } catch (RuntimeException e) {
            throw new QuotaException(Reason.CONFIGURATION, "invalid quota configuration: " + QuotaConfig.PREFIX
                    + "endpoint is not a Redis URI: " + e.getMessage(), e);
        }
        uri.setTimeout(config.connectTimeout());
        String endpoint = (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort()
                + (uri.getDatabase() == 0 ? "" : "/" + uri.getDatabase());
        ClientResources resources = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
                .nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(Channel channel) {
                        channel.pipeline().addFirst(new FlushConsolidationHandler(
                                FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
                    }
                })
                .build();
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(config.requestTimeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(config.connectTimeout()).build())
                .build());
        return new RedisConnector(config, uri, endpoint, resources, client);
    }

    public QuotaConfig config() {
        return config;
    }

    /** {@code redis://host:port[/db]}, without credentials, for messages. */
    public String endpoint() {
        return endpoint;
    }

    /** Threads that are not Netty I/O threads, to complete callers' futures on. */
    public Executor executors() {
        return resources.eventExecutorGroup();
    }

    /** A new connection, closed with this connector. */
    public CompletableFuture<StatefulRedisConnection<String, String>> connectAsync() {
        try {
            return client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture().thenApply(c -> {
                synchronized (this) {
                    if (closed) {
                        c.closeAsync();
                        throw new QuotaException(Reason.CLOSED, "the Redis connector for " + endpoint + " is closed");
                    }
                    connections.add(c);
                }
                return c;
            });
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A new connection, within the connect timeout, closed with this connector.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot be reached
     */
    public StatefulRedisConnection<String, String> connect() {
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
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint + ": "
                    + cause.getMessage(), cause);
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

    /** Closes every connection, the client and its threads. Idempotent. */
    @Override
    public void close() {
        List<StatefulRedisConnection<String, String>> open;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            open = new ArrayList<>(connections);
            connections.clear();
        }
        for (StatefulRedisConnection<String, String> c : open) {
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
