package dev.warden.lock.redis.internal;

import dev.warden.redis.internal.LettuceClients;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The driver's Lettuce client and its two connections — one for scripts, one for release messages —
 * on whichever topology the endpoints name: a {@link RedisClient} for one server or a Sentinel-found
 * primary (Lettuce asks the sentinels for the primary on every connect, so a reconnect after a
 * failover reaches the new one), a {@link RedisClusterClient} for a Cluster (scripts are routed to
 * the primary of their keys' slot and follow MOVED and ASK; the topology is refreshed periodically,
 * on redirections and on repeated reconnects, so a promoted replica is found; sharded subscriptions
 * are routed to their slot's node).
 *
 * <p>Commands fail within the request timeout and at once while disconnected, rather than queue, so
 * lock-api hears of an outage instead of waiting on it; Lettuce reconnects in the background, at most
 * {@link LettuceClients#MAX_RECONNECT_DELAY} apart.
 *
 * @param scripting where scripts run (routed by key on a Cluster)
 */
record Connections(ClientResources resources, AbstractRedisClient client, StatefulConnection<String, String> commands,
                   RedisScriptingAsyncCommands<String, String> scripting,
                   StatefulRedisPubSubConnection<String, String> pubSub) {

    /** The client's own resources (threads, timer), with the address map applied to every address it connects to. */
    static ClientResources resources(AddressMap addresses) {
        return LettuceClients.resources(addresses.isEmpty() ? null : addresses::apply);
    }

    /** Starts connecting both; the futures complete when each is connected. */
    static Opening open(Topology topology, ClientResources resources, Duration connectTimeout, Duration requestTimeout,
                        SslOptions ssl) {
        if (topology instanceof Topology.Cluster cluster) {
            for (RedisURI seed : cluster.seeds()) {
                seed.setTimeout(connectTimeout);
            }
            RedisClusterClient client = LettuceClients.cluster(resources, cluster.seeds(), ssl, connectTimeout,
                    requestTimeout);
            // Connections are made once the topology is read from the seeds.
            CompletableFuture<Void> topologyRead = client.refreshPartitionsAsync().toCompletableFuture();
            CompletableFuture<StatefulRedisClusterConnection<String, String>> commands =
                    topologyRead.thenCompose(t -> client.connectAsync(StringCodec.UTF8)).thenCompose(Connections::toEveryPrimary);
            CompletableFuture<? extends StatefulRedisPubSubConnection<String, String>> pubSub =
                    topologyRead.thenCompose(t -> client.connectPubSubAsync(StringCodec.UTF8)).thenCompose(p -> {
                        CompletableFuture<?>[] nodes = p.getPartitions().stream()
                                .filter(n -> n.is(RedisClusterNode.NodeFlag.UPSTREAM) && !n.getSlots().isEmpty())
                                .map(n -> p.getConnectionAsync(n.getUri().getHost(), n.getUri().getPort()))
                                .toArray(CompletableFuture[]::new);
                        return CompletableFuture.allOf(nodes).thenApply(v -> p);
                    });
            return new Opening(resources, client, commands.thenApply(c -> new Commands(c, c.async())), pubSub);
        }
        RedisURI uri = topology instanceof Topology.Standalone s ? s.uri() : ((Topology.Sentinel) topology).uri();
        // The URI's timeout bounds the connection handshake (HELLO, AUTH, SELECT) and the sentinels' answer.
        uri.setTimeout(connectTimeout);
        RedisClient client = LettuceClients.single(resources, ssl, connectTimeout, requestTimeout);
        var commands = client.connectAsync(StringCodec.UTF8, uri).toCompletableFuture();
        var pubSub = client.connectPubSubAsync(StringCodec.UTF8, uri).toCompletableFuture();
        return new Opening(resources, client, commands.thenApply(c -> new Commands(c, c.async())), pubSub);
    }

    /**
     * Connects to every primary now rather than at its first command (which Lettuce would reject
     * while that connection is being made).
     */
    private static CompletableFuture<StatefulRedisClusterConnection<String, String>> toEveryPrimary(
            StatefulRedisClusterConnection<String, String> connection) {
        // By address: commands routed by slot reach a node through the connection kept for its address.
        CompletableFuture<?>[] nodes = connection.getPartitions().stream()
                .filter(n -> n.is(RedisClusterNode.NodeFlag.UPSTREAM) && !n.getSlots().isEmpty())
                .map(n -> connection.getConnectionAsync(n.getUri().getHost(), n.getUri().getPort()))
                .toArray(CompletableFuture[]::new);
        return CompletableFuture.allOf(nodes).thenApply(v -> connection);
    }

    /** A connection for scripts, as its stateful connection and its scripting commands. */
    record Commands(StatefulConnection<String, String> connection, RedisScriptingAsyncCommands<String, String> scripting) {
    }

    /** Both connections on their way. */
    record Opening(ClientResources resources, AbstractRedisClient client, CompletableFuture<Commands> commands,
                   CompletableFuture<? extends StatefulRedisPubSubConnection<String, String>> pubSub) {

        /** Waits for both until {@code deadlineNanos}. */
        Connections await(long deadlineNanos) throws Exception {
            Commands c = commands.get(left(deadlineNanos), TimeUnit.NANOSECONDS);
            StatefulRedisPubSubConnection<String, String> p = pubSub.get(left(deadlineNanos), TimeUnit.NANOSECONDS);
            return new Connections(resources, client, c.connection(), c.scripting(), p);
        }

        private static long left(long deadlineNanos) {
            return Math.max(0, deadlineNanos - System.nanoTime());
        }
    }
}
