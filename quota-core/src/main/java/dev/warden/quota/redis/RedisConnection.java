package dev.warden.quota.redis;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;

import java.util.ArrayList;
import java.util.List;

/**
 * One connection from {@link RedisConnector} to the quota engine's Redis, whatever its topology. Its
 * commands are Lettuce's cluster-capable ones: on one server (or a Sentinel-found primary) they go to
 * it; on a Cluster each command goes to the primary of its key's slot (a script's keys all carry one
 * partition's hash tag), following MOVED and ASK, and a {@code SCAN} with the cursor it returned
 * covers every primary in turn.
 *
 * <p>Thread-safe as Lettuce's connections are; a connection with manual flushing belongs to whoever
 * flushes it.
 */
public final class RedisConnection {

    private final StatefulConnection<String, String> stateful;
    private final RedisClusterCommands<String, String> sync;
    private final RedisClusterAsyncCommands<String, String> async;
    private final StatefulRedisConnection<String, String> single;
    private final StatefulRedisClusterConnection<String, String> cluster;

    RedisConnection(StatefulRedisConnection<String, String> connection) {
        this.stateful = connection;
        this.sync = connection.sync();
        this.async = connection.async();
        this.single = connection;
        this.cluster = null;
    }

    RedisConnection(StatefulRedisClusterConnection<String, String> connection) {
        this.stateful = connection;
        this.sync = connection.sync();
        this.async = connection.async();
        this.single = null;
        this.cluster = connection;
    }

    /** Blocking commands. */
    public RedisClusterCommands<String, String> sync() {
        return sync;
    }

    /** Asynchronous commands. */
    public RedisClusterAsyncCommands<String, String> async() {
        return async;
    }

    /** Whether commands go to the primaries of a Cluster by slot. */
    public boolean isCluster() {
        return cluster != null;
    }

    /** Turns automatic flushing off (batches) or on; see Lettuce's {@code setAutoFlushCommands}. */
    public void setAutoFlushCommands(boolean autoFlush) {
        stateful.setAutoFlushCommands(autoFlush);
    }

    /** Writes every queued command (of every node's connection, on a Cluster). */
    public void flushCommands() {
        stateful.flushCommands();
    }

    /**
     * A connection to each primary: the one server, or every primary of the Cluster as its topology
     * says now (for what must run on each: {@code INFO}, loading scripts).
     */
    public List<StatefulRedisConnection<String, String>> primaries() {
        if (cluster == null) {
            return List.of(single);
        }
        List<StatefulRedisConnection<String, String>> primaries = new ArrayList<>();
        for (RedisClusterNode node : cluster.getPartitions()) {
            if (node.is(RedisClusterNode.NodeFlag.UPSTREAM) && !node.getSlots().isEmpty()) {
                primaries.add(cluster.getConnection(node.getNodeId()));
            }
        }
        return primaries;
    }

    void close() {
        stateful.close();
    }

    void closeAsync() {
        stateful.closeAsync();
    }
}
