package dev.warden.testkit;

import dev.warden.testkit.internal.RedisBinaries;
import dev.warden.testkit.internal.RedisCli;
import dev.warden.testkit.internal.RedisInfo;
import dev.warden.testkit.internal.RedisInfo.ClusterNode;
import dev.warden.testkit.internal.RedisProcess;
import dev.warden.testkit.internal.Wait;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A Redis Cluster for integration tests: three primaries and three replicas, each a
 * {@code redis-server} child process on a free loopback port (its bus port, +10000, free too), joined
 * by {@code redis-cli --cluster create --cluster-replicas 1}. Every node is a {@link RedisServer} that
 * can be paused, killed and restarted; {@link #failover(RedisServer)} runs {@code CLUSTER FAILOVER} on
 * a replica, {@link #awaitNewPrimaryOfSlot} waits for the cluster to replace a killed primary, and {@link #moveSlot} reshards one slot the way {@code redis-cli --cluster reshard}
 * does.
 *
 * <p>Only local binaries are used ({@code redis-server} and {@code redis-cli}, found as
 * {@link RedisServer} finds its binary); without them {@link Builder#start()} fails with a message
 * that says how to install them.
 *
 * <p>Nodes declare a silent peer failed after {@link Builder#nodeTimeout} (default 15 s, so a test
 * that pauses a node for a few seconds does not cause a failover unless it asks for one).
 *
 * <p>Thread-safe: the nodes are fixed at start; the topology is read afresh from the nodes on each call.
 */
public final class RedisCluster implements AutoCloseable {

    static final Duration STABLE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);
    private static final int SLOTS = 16384;

    private final List<RedisServer> nodes;
    private final List<RedisServer> seeds;

    private RedisCluster(List<RedisServer> nodes) {
        this.nodes = List.copyOf(nodes);
        this.seeds = List.copyOf(nodes.subList(0, 3));
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code redis-cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,127.0.0.1:<p3>} (the first primaries as seeds): the form Warden's settings take. */
    public String uri() {
        return "redis-cluster://" + seeds.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","));
    }

    /** All six nodes, in the order they were started (the first three were created as primaries). */
    public List<RedisServer> nodes() {
        return nodes;
    }

    /** The Redis Cluster hash slot of a key (CRC16 of its hash tag, modulo 16384). */
    public static int slot(String key) {
        return RedisInfo.slot(key);
    }

    /** The primaries serving slots now, as a live node sees them. */
    public List<RedisServer> primaries() {
        return view().stream().filter(n -> n.primary() && !n.failing() && !n.slots().isEmpty())
                .map(n -> node(n.port())).toList();
    }

    /** The primary serving {@code slot} now. */
    public RedisServer primaryOfSlot(int slot) {
        return view().stream().filter(n -> n.primary() && !n.failing() && RedisInfo.covers(n.slots(), slot))
                .map(n -> node(n.port())).findFirst()
                .orElseThrow(() -> new IllegalStateException("no live primary serves slot " + slot));
    }

    /** The primary serving {@code key}'s slot now. */
    public RedisServer primaryOf(String key) {
        return primaryOfSlot(slot(key));
    }

    /** The replica of {@code primary}, as a live node sees it. */
    public RedisServer replicaOf(RedisServer primary) {
        List<ClusterNode> view = view();
        String id = view.stream().filter(n -> n.port() == primary.port()).map(ClusterNode::id).findFirst().orElseThrow();
        return view.stream().filter(n -> id.equals(n.primaryId())).map(n -> node(n.port())).findFirst()
                .orElseThrow(() -> new IllegalStateException("primary " + primary.port() + " has no replica"));
    }

    /** Sends one command to the primary of {@code key}'s slot (following one MOVED), as {@link RedisServer#command} does. */
    public Object command(String key, String... args) {
        RedisServer target = primaryOf(key);
        try {
            return target.command(args);
        } catch (RedisReplyException e) {
            if (!"MOVED".equals(e.code())) {
                throw e;
            }
            String[] parts = e.getMessage().split(" ");
            String address = parts[parts.length - 1];
            return node(Integer.parseInt(address.substring(address.lastIndexOf(':') + 1))).command(args);
        }
    }

    /** Freezes every node (SIGSTOP): nothing answers, and no node can declare another failed. */
    public void pauseAll() {
        for (RedisServer n : nodes) {
            if (n.isRunning() && !n.isPaused()) {
                n.pause();
            }
        }
    }

    /** Thaws every paused node. */
    public void resumeAll() {
        for (RedisServer n : nodes) {
            if (n.isRunning() && n.isPaused()) {
                n.resume();
            }
        }
    }

    /**
     * {@code CLUSTER FAILOVER} on {@code replica} (a coordinated failover: the replica first catches up
     * with its primary), then waits until every live node sees it as the primary of its slots.
     */
    public void failover(RedisServer replica) {
        replica.command("CLUSTER", "FAILOVER");
        boolean done = Wait.until(STABLE_TIMEOUT, () -> isMaster(replica) && liveNodes().stream()
                .allMatch(n -> viewOf(n).stream().anyMatch(c -> c.port() == replica.port() && c.primary() && !c.slots().isEmpty())));
        if (!done) {
            throw new IllegalStateException("replica " + replica.port() + " did not become a primary within "
                    + STABLE_TIMEOUT.toSeconds() + " s");
        }
    }

    /**
     * Waits until {@code slot}, which {@code former} served, is served by another node that answers as
     * a primary, in every live node's view, with the cluster's state {@code ok} everywhere: after
     * {@code former} was killed, its replica's promotion.
     *
     * @return the node now serving it
     * @throws IllegalStateException when that does not happen within {@code timeout}
     */
    public RedisServer awaitNewPrimaryOfSlot(int slotOfFormer, RedisServer former, Duration timeout) {
        RedisServer[] found = new RedisServer[1];
        boolean done = Wait.until(timeout, () -> {
            Set<Integer> owners = new HashSet<>();
            for (RedisServer n : liveNodes()) {
                if (!"ok".equals(clusterInfo(n).get("cluster_state"))) {
                    return false;
                }
                viewOf(n).stream().filter(c -> c.primary() && !c.failing() && RedisInfo.covers(c.slots(), slotOfFormer))
                        .forEach(c -> owners.add(c.port()));
            }
            if (owners.size() != 1 || owners.contains(former.port())) {
                return false;
            }
            RedisServer candidate = node(owners.iterator().next());
            if (!isMaster(candidate)) {
                return false;
            }
            found[0] = candidate;
            return true;
        });
        if (!done) {
            throw new IllegalStateException("slot " + slotOfFormer + " of primary " + former.port()
                    + " did not move to a promoted replica within " + timeout.toMillis() + " ms");
        }
        return found[0];
    }

    /**
     * Moves one slot, with its keys, to {@code target} (a primary), as {@code redis-cli --cluster reshard}
     * does: {@code IMPORTING} on the target, {@code MIGRATING} on the source, {@code MIGRATE} of the keys
     * in batches, then {@code SETSLOT NODE} on every primary. Clients see {@code ASK} while it runs and
     * {@code MOVED} after.
     */
    public void moveSlot(int slot, RedisServer target) {
        if (primaryOfSlot(slot) == target) {
            return;
        }
        SlotMigration migration = beginMigration(slot, target);
        migration.migrateAll();
        migration.finish();
    }

    /**
     * Starts moving one slot to {@code target}: {@code IMPORTING} on the target, {@code MIGRATING} on
     * the source. Until {@link SlotMigration#finish()}, the source answers {@code ASK} for keys it no
     * longer holds and {@code TRYAGAIN} to a command on several keys of which it holds only some.
     */
    public SlotMigration beginMigration(int slot, RedisServer target) {
        RedisServer source = primaryOfSlot(slot);
        if (source == target) {
            throw new IllegalArgumentException("slot " + slot + " is already served by " + target.port());
        }
        target.command("CLUSTER", "SETSLOT", Integer.toString(slot), "IMPORTING", myId(source));
        source.command("CLUSTER", "SETSLOT", Integer.toString(slot), "MIGRATING", myId(target));
        return new SlotMigration(this, slot, source, target);
    }

    /**
     * Undoes what tests did: resumes paused nodes, restarts killed ones (a former primary rejoins as a
     * replica of the node that replaced it), and waits until the cluster is stable again: state
     * {@code ok} on every node, every slot served, three primaries each followed by an in-sync replica,
     * and every node agreeing on who is which.
     */
    public void heal() {
        resumeAll();
        for (RedisServer n : nodes) {
            if (!n.isRunning()) {
                n.restart();
            }
        }
        if (liveNodes().stream().anyMatch(n -> String.valueOf(call(n, "CLUSTER", "NODES")).contains("->-")
                || String.valueOf(call(n, "CLUSTER", "NODES")).contains("-<-"))) {
            // A slot migration a test left half done: redis-cli finishes or undoes it.
            fix();
        }
        if (!Wait.until(STABLE_TIMEOUT, this::stable)) {
            throw new IllegalStateException("the cluster did not become stable within " + STABLE_TIMEOUT.toSeconds()
                    + " s:\n" + describe());
        }
    }

    private void fix() {
        RedisServer any = liveNodes().get(0);
        RedisCli.fixCluster(any.host() + ":" + any.port());
    }

    /** Stops every node and deletes their directories; idempotent. */
    public void stop() {
        nodes.forEach(RedisServer::stop);
    }

    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "RedisCluster[" + uri() + "]";
    }

    // ---- internals ----

    private boolean stable() {
        Set<String> views = new HashSet<>();
        for (RedisServer n : nodes) {
            Map<String, String> info = clusterInfo(n);
            if (!"ok".equals(info.get("cluster_state")) || !"6".equals(info.get("cluster_known_nodes"))
                    || !Integer.toString(SLOTS).equals(info.get("cluster_slots_ok"))) {
                return false;
            }
            List<ClusterNode> view = viewOf(n);
            if (view.size() != 6 || view.stream().anyMatch(c -> c.failing() || !c.connected())) {
                return false;
            }
            List<ClusterNode> primaries = view.stream().filter(c -> c.primary() && !c.slots().isEmpty()).toList();
            Set<String> primaryIds = primaries.stream().map(ClusterNode::id).collect(Collectors.toSet());
            List<ClusterNode> replicas = view.stream().filter(c -> !c.primary()).toList();
            if (primaries.size() != 3 || replicas.size() != 3
                    || !replicas.stream().map(ClusterNode::primaryId).collect(Collectors.toSet()).equals(primaryIds)) {
                return false;
            }
            views.add(view.stream().map(c -> c.port() + (c.primary() ? "P" : "R")).sorted().collect(Collectors.joining(",")));
            if (!isMaster(n)) {
                Map<String, String> replication = RedisInfo.fields(call(n, "INFO", "replication"));
                if (!"up".equals(replication.get("master_link_status"))) {
                    return false;
                }
            }
        }
        return views.size() == 1;
    }

    private String describe() {
        StringBuilder b = new StringBuilder();
        for (RedisServer n : nodes) {
            b.append("node ").append(n.port()).append(n.isRunning() ? "" : " (down)").append(":\n")
                    .append(call(n, "CLUSTER", "NODES")).append('\n');
        }
        return b.toString();
    }

    List<RedisServer> liveNodes() {
        return nodes.stream().filter(n -> n.isRunning() && !n.isPaused()).toList();
    }

    /** CLUSTER NODES as the first live node that answers sees it. */
    private List<ClusterNode> view() {
        for (RedisServer n : liveNodes()) {
            List<ClusterNode> view = viewOf(n);
            if (!view.isEmpty()) {
                return view;
            }
        }
        throw new IllegalStateException("no node of the cluster answers");
    }

    static List<ClusterNode> viewOf(RedisServer n) {
        Object reply = call(n, "CLUSTER", "NODES");
        return reply == null ? List.of() : RedisInfo.clusterNodes(reply);
    }

    private static Map<String, String> clusterInfo(RedisServer n) {
        Object reply = call(n, "CLUSTER", "INFO");
        return reply == null ? Map.of() : RedisInfo.fields(reply);
    }

    static String myId(RedisServer n) {
        return String.valueOf(n.command("CLUSTER", "MYID"));
    }

    private RedisServer node(int port) {
        return nodes.stream().filter(n -> n.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("port " + port + " is not a node of this cluster"));
    }

    private static boolean isMaster(RedisServer node) {
        Object role = call(node, "ROLE");
        return role instanceof List<?> l && !l.isEmpty() && "master".equals(l.get(0));
    }

    /** A command, or null when the node cannot be reached or refuses it. */
    private static Object call(RedisServer node, String... args) {
        if (!node.isRunning() || node.isPaused()) {
            return null;
        }
        try {
            return node.command(CALL_TIMEOUT, args);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** Options for the cluster to start. */
    public static final class Builder {

        private final Map<String, String> options = new LinkedHashMap<>();
        private Duration nodeTimeout = Duration.ofSeconds(15);

        private Builder() {
        }

        /** {@code cluster-node-timeout}: how long a silent node stays up in its peers' eyes; default 15 s. */
        public Builder nodeTimeout(Duration nodeTimeout) {
            this.nodeTimeout = Objects.requireNonNull(nodeTimeout);
            return this;
        }

        /** Append-only file on every node. */
        public Builder appendOnly(boolean enabled) {
            return config("appendonly", enabled ? "yes" : "no");
        }

        /** Fsync after every write on every node. */
        public Builder appendFsyncAlways() {
            return config("appendfsync", "always");
        }

        /** Any other directive for every node (see {@link RedisServer.Builder#config}). */
        public Builder config(String name, String value) {
            RedisServer.builder().config(name, value); // the same reserved names
            options.put(name, value);
            return this;
        }

        /** Starts six nodes, creates the cluster with {@code redis-cli --cluster create}, and waits until it is stable. */
        public RedisCluster start() {
            Path binary = RedisBinaries.server();
            RedisBinaries.cli(); // fails early, with how to install it, when it is missing
            Map<String, String> nodeOptions = new LinkedHashMap<>();
            nodeOptions.put("save", "");
            nodeOptions.put("appendonly", "no");
            nodeOptions.put("cluster-enabled", "yes");
            nodeOptions.put("cluster-config-file", "nodes.conf");
            nodeOptions.put("cluster-node-timeout", Long.toString(nodeTimeout.toMillis()));
            nodeOptions.putAll(options);
            List<RedisServer> started = new ArrayList<>();
            try {
                for (int i = 0; i < 6; i++) {
                    started.add(new RedisServer(RedisProcess.launch(binary, RedisProcess.Role.CLUSTER_NODE, nodeOptions)));
                }
                create(started);
                RedisCluster cluster = new RedisCluster(started);
                cluster.heal();
                return cluster;
            } catch (RuntimeException e) {
                started.forEach(RedisServer::stop);
                throw e;
            }
        }

        private static void create(List<RedisServer> nodes) {
            RedisCli.createCluster(nodes.stream().map(n -> n.host() + ":" + n.port()).toList());
        }
    }
}
