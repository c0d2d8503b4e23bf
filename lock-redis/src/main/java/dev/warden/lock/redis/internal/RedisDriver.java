package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.HandOffDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Redis driver: one Lettuce client with its own resources (threads, timer), one command
 * connection and one pub/sub connection for release messages. Commands fail within the request
 * timeout and fail at once while disconnected rather than queue, so lock-api hears of an outage
 * instead of waiting on it; Lettuce reconnects in the background, at most {@link #MAX_RECONNECT_DELAY}
 * apart, and resubscribes.
 *
 * <p>Concurrency: every field is final and thread-safe (Lettuce's connections, the scripts' digests);
 * {@code closed} is atomic.
 */
public final class RedisDriver implements HandOffDriver {

    private static final Logger log = LoggerFactory.getLogger(RedisDriver.class);

    /** Lettuce's default backoff grows to 30 s; a lock client should notice a restarted server sooner. */
    static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
    private static final Duration SHUTDOWN_TIMEOUT = Duration.ofSeconds(2);

    private final String namespace;
    private final String endpoint;
    private final ClientResources resources;
    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final Scripts scripts;
    private final Subscriptions subscriptions;
    private final Calls calls;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisDriver(LockConfig config, String endpoint, ClientResources resources, RedisClient client,
                        StatefulRedisConnection<String, String> connection,
                        StatefulRedisPubSubConnection<String, String> pubSub, Scripts scripts) {
        this.namespace = config.namespace();
        this.endpoint = endpoint;
        this.resources = resources;
        this.client = client;
        this.connection = connection;
        this.scripts = scripts;
        this.subscriptions = new Subscriptions(pubSub);
        this.calls = new Calls(resources.eventExecutorGroup(), resources.timer(), config.requestTimeout(), endpoint);
    }

    /**
     * Connects both connections and loads the scripts, all within the connect timeout.
     *
     * @throws LockException {@code UNAVAILABLE}, naming the endpoint, when that fails; nothing is
     *         left running
     */
    public static RedisDriver open(LockConfig config) {
        RedisURI uri = Endpoints.parse(config.endpoints().get(0));
        // The URI's timeout bounds the connection handshake (HELLO, AUTH, SELECT).
        uri.setTimeout(config.connectTimeout());
        String endpoint = Endpoints.describe(uri);
        ClientResources resources = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
                .nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(Channel channel) {
                        // Commands from many threads queue on the I/O thread one write task each;
                        // flush once per batch of tasks rather than once per command.
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
        CompletableFuture<StatefulRedisConnection<String, String>> connecting =
                client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture();
        CompletableFuture<StatefulRedisPubSubConnection<String, String>> connectingPubSub =
                client.connectPubSubAsync(StringCodec.UTF8, uri).toCompletableFuture();
        try {
            long deadline = System.nanoTime() + config.connectTimeout().toNanos();
            StatefulRedisConnection<String, String> connection = connecting.get(left(deadline), TimeUnit.NANOSECONDS);
            StatefulRedisPubSubConnection<String, String> pubSub = connectingPubSub.get(left(deadline), TimeUnit.NANOSECONDS);
            Scripts scripts = new Scripts(connection.async());
            scripts.loadAll().get(left(deadline), TimeUnit.NANOSECONDS);
            return new RedisDriver(config, endpoint, resources, client, connection, pubSub, scripts);
        } catch (InterruptedException e) {
            shutdown(client, resources);
            throw LockException.interrupted("interrupted while connecting to Redis at " + endpoint, e);
        } catch (TimeoutException e) {
            shutdown(client, resources);
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + " within " + config.connectTimeout().toMillis() + " ms", e);
        } catch (ExecutionException | RuntimeException e) {
            shutdown(client, resources);
            Throwable cause = Calls.unwrap(e);
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + ": " + cause.getMessage(), cause);
        }
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        checkOpen();
        return new RedisAttempt(this, name, owner, Keys.of(namespace, name));
    }

    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        RedisGrant g = RedisGrant.of(grant);
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        return calls.bounded("the renew script for " + g.keys().lock(),
                scripts.renew(g.keys(), g.value(), ttlMillis).thenApply(RedisDriver::isOne));
    }

    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        RedisGrant g = RedisGrant.of(grant);
        checkOpen();
        return calls.bounded("the release script for " + g.keys().lock(),
                scripts.release(g.keys(), g.value()).thenApply(RedisDriver::isOne));
    }

    @Override
    public CompletionStage<HandOff> handOff(Grant grant, String owner, Duration ttl) {
        RedisGrant g = RedisGrant.of(grant);
        long ttlMillis = ttlMillis(ttl);
        checkOpen();
        return calls.bounded("the hand-off script for " + g.keys().lock(),
                scripts.handOff(g.keys(), g.value(), owner, ttlMillis).thenApply(reply -> handedOff(g, owner, reply)),
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
        subscriptions.close();
        shutdown(client, resources);
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

    private static void shutdown(RedisClient client, ClientResources resources) {
        long timeout = SHUTDOWN_TIMEOUT.toMillis();
        try {
            client.shutdown(0, timeout, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            log.debug("Redis client shutdown failed", e);
        }
        try {
            if (!resources.shutdown(0, timeout, TimeUnit.MILLISECONDS).await(2 * timeout, TimeUnit.MILLISECONDS)) {
                log.warn("Redis client threads did not stop within {} ms", 2 * timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
