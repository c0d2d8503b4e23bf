package dev.warden.testkit;

import dev.warden.testkit.internal.RedisBinaries;
import dev.warden.testkit.internal.RedisInfo;
import dev.warden.testkit.internal.RedisProcess;
import dev.warden.testkit.internal.Wait;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A Redis Sentinel deployment for integration tests: one primary, one replica and three sentinels
 * (quorum 2), each a {@code redis-server} child process on a free loopback port ({@code redis-server
 * --sentinel} for the sentinels), with fault controls: every node is a {@link RedisServer} that can
 * be paused, killed and restarted, and {@link #failover()} asks the sentinels to promote the replica.
 *
 * <p>Only local binaries are used ({@code WARDEN_REDIS_SERVER}, else {@code redis-server} on
 * {@code PATH}); {@code WARDEN_REDIS_URI} and Docker cannot provide a topology, so without a binary
 * {@link Builder#start()} fails with a message that says how to install one.
 *
 * <p>Sentinels declare the primary down after {@link Builder#downAfter} of silence (default 30 s, so a
 * test that pauses the primary for a few seconds does not cause a failover unless it asks for one).
 *
 * <p>Thread-safe: the nodes are fixed at start; what the sentinels report is read afresh on each call.
 */
public final class RedisSentinel implements AutoCloseable {

    /** The name the sentinels monitor the primary under. */
    public static final String MASTER_NAME = "warden";

    private static final Duration STABLE_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(2);

    private final List<RedisServer> data;
    private final List<RedisServer> sentinels;

    private RedisSentinel(List<RedisServer> data, List<RedisServer> sentinels) {
        this.data = List.copyOf(data);
        this.sentinels = List.copyOf(sentinels);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** {@code redis-sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,127.0.0.1:<s3>/warden}: the form Warden's settings take. */
    public String uri() {
        return "redis-sentinel://" + sentinels.stream().map(s -> s.host() + ":" + s.port()).collect(Collectors.joining(","))
                + "/" + MASTER_NAME;
    }

    /** The two data nodes, in the order they were started (the first started as the primary). */
    public List<RedisServer> dataNodes() {
        return data;
    }

    /** The three sentinels. */
    public List<RedisServer> sentinels() {
        return sentinels;
    }

    /** Every node, data nodes first. */
    public List<RedisServer> allNodes() {
        List<RedisServer> all = new ArrayList<>(data);
        all.addAll(sentinels);
        return all;
    }

    /**
     * The data node the sentinels name as primary now (the first live sentinel that answers).
     *
     * @throws IllegalStateException when no sentinel answers
     */
    public RedisServer primary() {
        for (RedisServer s : sentinels) {
            Optional<Integer> port = primaryPortSeenBy(s);
            if (port.isPresent()) {
                return dataNode(port.get());
            }
        }
        throw new IllegalStateException("no sentinel names a primary");
    }

    /** The data node that is not the primary. */
    public RedisServer replica() {
        RedisServer primary = primary();
        return data.stream().filter(n -> n != primary).findFirst().orElseThrow();
    }

    /** Freezes every node (SIGSTOP), sentinels last; nothing answers and nothing fails over. */
    public void pauseAll() {
        for (RedisServer n : allNodes()) {
            if (n.isRunning() && !n.isPaused()) {
                n.pause();
            }
        }
    }

    /** Thaws every paused node, sentinels first. */
    public void resumeAll() {
        List<RedisServer> all = new ArrayList<>(sentinels);
        all.addAll(data);
        for (RedisServer n : all) {
            if (n.isRunning() && n.isPaused()) {
                n.resume();
            }
        }
    }

    /**
     * Asks a sentinel to fail over ({@code SENTINEL FAILOVER}) and waits until every live sentinel names
     * the former replica as primary and it answers as one.
     *
     * @return the new primary
     */
    public RedisServer failover() {
        RedisServer before = primary();
        RedisServer asked = sentinels.stream().filter(s -> s.isRunning() && !s.isPaused()).findFirst().orElseThrow();
        asked.command("SENTINEL", "FAILOVER", MASTER_NAME);
        return awaitPrimaryOtherThan(before, STABLE_TIMEOUT);
    }

    /**
     * Waits until every live sentinel names a primary other than {@code former} and that node answers
     * {@code ROLE} as a master.
     *
     * @return the new primary
     * @throws IllegalStateException when that does not happen within {@code timeout}
     */
    public RedisServer awaitPrimaryOtherThan(RedisServer former, Duration timeout) {
        RedisServer[] found = new RedisServer[1];
        boolean done = Wait.until(timeout, () -> {
            Set<Integer> named = sentinels.stream().filter(s -> s.isRunning() && !s.isPaused())
                    .map(this::primaryPortSeenBy).map(p -> p.orElse(-1)).collect(Collectors.toSet());
            if (named.size() != 1 || named.contains(-1) || named.contains(former.port())) {
                return false;
            }
            RedisServer candidate = dataNode(named.iterator().next());
            if (!isMaster(candidate)) {
                return false;
            }
            found[0] = candidate;
            return true;
        });
        if (!done) {
            throw new IllegalStateException("the sentinels did not promote a new primary (other than port " + former.port()
                    + ") within " + timeout.toMillis() + " ms");
        }
        return found[0];
    }

    /**
     * Undoes what tests did: resumes paused nodes, restarts killed ones, makes a restarted former
     * primary a replica of the current one, and waits until the deployment is stable again (every
     * sentinel names the same primary, sees the other two sentinels, and the replica is in sync).
     */
    public void heal() {
        resumeAll();
        for (RedisServer n : allNodes()) {
            if (!n.isRunning()) {
                n.restart();
            }
        }
        boolean stable = Wait.until(STABLE_TIMEOUT, this::stable);
        if (!stable) {
            throw new IllegalStateException("the Sentinel deployment did not become stable within "
                    + STABLE_TIMEOUT.toSeconds() + " s: " + describe());
        }
    }

    /** Stops every node and deletes their directories; idempotent. */
    public void stop() {
        for (RedisServer n : allNodes()) {
            n.stop();
        }
    }

    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "RedisSentinel[" + uri() + "]";
    }

    // ---- internals ----

    private boolean stable() {
        Set<Integer> named = sentinels.stream().map(this::primaryPortSeenBy).map(p -> p.orElse(-1))
                .collect(Collectors.toSet());
        if (named.size() != 1 || named.contains(-1)) {
            return false;
        }
        RedisServer primary = dataNode(named.iterator().next());
        RedisServer replica = data.stream().filter(n -> n != primary).findFirst().orElseThrow();
        Map<String, String> replication = info(replica, "replication");
        if ("master".equals(replication.get("role"))) {
            // A former primary restarted as a primary of its own: the sentinels would convert it in up to 10 s.
            // As they do, its clients are disconnected too, so they ask the sentinels again.
            call(replica, "REPLICAOF", primary.host(), Integer.toString(primary.port()));
            call(replica, "CLIENT", "KILL", "TYPE", "normal");
            call(replica, "CLIENT", "KILL", "TYPE", "pubsub");
            return false;
        }
        if (!Integer.toString(primary.port()).equals(replication.get("master_port"))
                || !"up".equals(replication.get("master_link_status"))) {
            return false;
        }
        if (!isMaster(primary)) {
            return false;
        }
        for (RedisServer s : sentinels) {
            Map<String, String> master = sentinelMaster(s);
            if (!"master".equals(master.get("flags")) || !"2".equals(master.get("num-other-sentinels"))) {
                return false;
            }
            Object replicas = call(s, "SENTINEL", "REPLICAS", MASTER_NAME);
            boolean seen = replicas instanceof List<?> list && list.stream().map(RedisInfo::pairs)
                    .anyMatch(r -> Integer.toString(replica.port()).equals(r.get("port")) && "slave".equals(r.get("flags"))
                            && "ok".equals(r.get("master-link-status")));
            if (!seen) {
                return false;
            }
        }
        return true;
    }

    private String describe() {
        StringBuilder b = new StringBuilder();
        for (RedisServer s : sentinels) {
            b.append("\n  sentinel ").append(s.port()).append(": ").append(sentinelMaster(s));
        }
        for (RedisServer n : data) {
            b.append("\n  data ").append(n.port()).append(": ").append(info(n, "replication"));
        }
        return b.toString();
    }

    private Map<String, String> sentinelMaster(RedisServer sentinel) {
        Object reply = call(sentinel, "SENTINEL", "MASTER", MASTER_NAME);
        return reply == null ? Map.of() : RedisInfo.pairs(reply);
    }

    private Optional<Integer> primaryPortSeenBy(RedisServer sentinel) {
        if (!sentinel.isRunning() || sentinel.isPaused()) {
            return Optional.empty();
        }
        Object reply = call(sentinel, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        if (reply instanceof List<?> l && l.size() == 2) {
            return Optional.of(Integer.parseInt(String.valueOf(l.get(1))));
        }
        return Optional.empty();
    }

    private RedisServer dataNode(int port) {
        return data.stream().filter(n -> n.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("the sentinels name port " + port + ", not a data node of this deployment"));
    }

    private static boolean isMaster(RedisServer node) {
        Object role = call(node, "ROLE");
        return role instanceof List<?> l && !l.isEmpty() && "master".equals(l.get(0));
    }

    private static Map<String, String> info(RedisServer node, String section) {
        Object reply = call(node, "INFO", section);
        return reply == null ? Map.of() : RedisInfo.fields(reply);
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

    /** Options for the deployment to start. */
    public static final class Builder {

        private final Map<String, String> options = new LinkedHashMap<>();
        private Duration downAfter = Duration.ofSeconds(30);
        private Duration failoverTimeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /** How long a silent primary stays up in the sentinels' eyes ({@code down-after-milliseconds}); default 30 s. */
        public Builder downAfter(Duration downAfter) {
            this.downAfter = Objects.requireNonNull(downAfter);
            return this;
        }

        /** The sentinels' {@code failover-timeout}; default 10 s. */
        public Builder failoverTimeout(Duration failoverTimeout) {
            this.failoverTimeout = Objects.requireNonNull(failoverTimeout);
            return this;
        }

        /** Append-only file on the data nodes. */
        public Builder appendOnly(boolean enabled) {
            return config("appendonly", enabled ? "yes" : "no");
        }

        /** Fsync after every write on the data nodes. */
        public Builder appendFsyncAlways() {
            return config("appendfsync", "always");
        }

        /** Any other directive for the data nodes (see {@link RedisServer.Builder#config}). */
        public Builder config(String name, String value) {
            RedisServer.builder().config(name, value); // the same reserved names
            options.put(name, value);
            return this;
        }

        /** Starts the data nodes, makes the second a replica of the first, starts the sentinels and waits until all agree. */
        public RedisSentinel start() {
            Path binary = RedisBinaries.server();
            Map<String, String> dataOptions = new LinkedHashMap<>();
            dataOptions.put("save", "");
            dataOptions.put("appendonly", "no");
            dataOptions.putAll(options);
            List<RedisServer> data = new ArrayList<>();
            List<RedisServer> sentinels = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    data.add(new RedisServer(RedisProcess.launch(binary, RedisProcess.Role.SERVER, dataOptions)));
                }
                RedisServer primary = data.get(0);
                data.get(1).command("REPLICAOF", primary.host(), Integer.toString(primary.port()));
                for (int i = 0; i < 3; i++) {
                    Map<String, String> conf = new LinkedHashMap<>();
                    conf.put("monitor", MASTER_NAME + " " + primary.host() + " " + primary.port() + " 2");
                    conf.put("down-after-milliseconds", MASTER_NAME + " " + downAfter.toMillis());
                    conf.put("failover-timeout", MASTER_NAME + " " + failoverTimeout.toMillis());
                    conf.put("parallel-syncs", MASTER_NAME + " 1");
                    sentinels.add(new RedisServer(RedisProcess.launch(binary, RedisProcess.Role.SENTINEL, conf)));
                }
                RedisSentinel deployment = new RedisSentinel(data, sentinels);
                deployment.heal();
                return deployment;
            } catch (RuntimeException e) {
                data.forEach(RedisServer::stop);
                sentinels.forEach(RedisServer::stop);
                throw e;
            }
        }
    }
}
