package dev.warden.quota.ledger.internal;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.internal.QuotaConfig;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The ledger's own Redis client (the quota service's connections are not shared: the consumer's
 * blocking reads would hold them). Same options as the service: commands fail within the request
 * timeout, and at once while disconnected; reconnection runs in the background.
 */
public final class RedisLink implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RedisLink.class);

    private final QuotaConfig config;
    private final String endpoint;
    private final ClientResources resources;
    private final RedisClient client;
    private final RedisURI uri;
    private final List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();

    private RedisLink(QuotaConfig config, String endpoint, ClientResources resources, RedisClient client, RedisURI uri) {
        this.config = config;
        this.endpoint = endpoint;
        this.resources = resources;
        this.client = client;
        this.uri = uri;
    }

    public static RedisLink create(QuotaConfig config) {
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
                .reconnectDelay(Delay.exponential(Duration.ofMillis(1), Duration.ofSeconds(1), 2, TimeUnit.MILLISECONDS))
                .build();
        RedisClient client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(config.requestTimeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(config.connectTimeout()).build())
                .build());
        return new RedisLink(config, endpoint, resources, client, uri);
    }

    public QuotaConfig config() {
        return config;
    }

    /** {@code redis://host:port[/db]}, without credentials, for messages. */
    public String endpoint() {
        return endpoint;
    }

    /**
     * A new connection, closed with this link.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot be reached
     */
    public synchronized StatefulRedisConnection<String, String> connect() {
        try {
            StatefulRedisConnection<String, String> c = client.connect(StringCodec.UTF8, uri);
            connections.add(c);
            return c;
        } catch (RuntimeException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint + ": "
                    + e.getMessage(), e);
        }
    }

    @Override
    public synchronized void close() {
        for (StatefulRedisConnection<String, String> c : connections) {
            try {
                c.close();
            } catch (RuntimeException e) {
                log.debug("closing a Redis connection failed", e);
            }
        }
        connections.clear();
        try {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        } catch (RuntimeException e) {
            log.warn("closing the ledger's Redis client failed", e);
        }
        try {
            resources.shutdown(0, 2, TimeUnit.SECONDS).get(3, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("shutting the ledger's Redis threads down failed", e);
        }
    }
}
