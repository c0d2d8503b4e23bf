package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Workload;
import dev.warden.testkit.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CPU time server processes have used so far, read from the operating system, so a run can say
 * how much each operation cost the server: the figure that shows whether a client or the server is
 * the limit. For a topology it is the sum over its nodes, and also given per group of nodes (a
 * Cluster's primaries and replicas), which is what a projection to more primaries needs.
 */
public final class ServerCpu {

    private final Map<String, List<ProcessHandle>> groups;

    private ServerCpu(Map<String, List<ProcessHandle>> groups) {
        this.groups = groups;
    }

    /** The redis-server process serving {@code redis}'s port: a child of this JVM, launched by testkit. */
    public static ServerCpu of(RedisServer redis) {
        return new ServerCpu(Map.of("server", List.of(process(redis))));
    }

    /** The processes of several nodes, in named groups (e.g. primaries and replicas); {@link #used()} sums them all. */
    public static ServerCpu ofGroups(Map<String, List<RedisServer>> nodes) {
        Map<String, List<ProcessHandle>> groups = new LinkedHashMap<>();
        nodes.forEach((name, servers) -> groups.put(name, servers.stream().map(ServerCpu::process).toList()));
        return new ServerCpu(groups);
    }

    /**
     * The CPU of each server the rows run on, when this JVM started one server of each kind with
     * testkit: {@code redis}, and the only etcd and ZooKeeper servers below this JVM.
     */
    public static Map<Workload.Server, ServerCpu> ofServers(RedisServer redis) {
        return Map.of(Workload.Server.REDIS, of(redis),
                Workload.Server.ETCD, ofOnlyChild("etcd", "etcd --name"),
                Workload.Server.ZOOKEEPER, ofOnlyChild("zookeeper", "QuorumPeerMain"));
    }

    /**
     * The one process below this JVM whose command line contains {@code text} (testkit's etcd server,
     * {@code "etcd --name"}; its ZooKeeper server, {@code "QuorumPeerMain"}), reported as {@code name}.
     *
     * @throws IllegalStateException when none or more than one matches: a figure summed over the wrong
     *         processes would be worse than none
     */
    public static ServerCpu ofOnlyChild(String name, String text) {
        List<ProcessHandle> matches = ProcessHandle.current().descendants()
                .filter(p -> commandLine(p).contains(text)).toList();
        if (matches.size() != 1) {
            throw new IllegalStateException(matches.size() + " child processes run '" + text + "', not one: " + name
                    + "'s CPU cannot be told apart");
        }
        return new ServerCpu(Map.of(name, matches));
    }

    private static ProcessHandle process(RedisServer redis) {
        // redis-server rewrites its command line to its process title, "redis-server host:port".
        String address = ":" + redis.port();
        return ProcessHandle.current().descendants()
                .filter(p -> commandLine(p).contains("redis-server") && commandLine(p).contains(address))
                .findFirst()
                .orElseThrow(() -> new IllegalStateException("no redis-server child process serves port " + redis.port()));
    }

    private static String commandLine(ProcessHandle p) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline"), StandardCharsets.UTF_8)
                    .replace('\0', ' ');
        } catch (IOException | UncheckedIOException gone) {
            return "";
        }
    }

    /**
     * CPU time used so far by every process below this JVM whose command line contains {@code text}
     * (a PostgreSQL server is a postmaster and one process per connection); processes that ended are
     * not counted, so measure while the connections are open.
     */
    public static Duration descendants(String text) {
        return ProcessHandle.current().descendants()
                .filter(p -> commandLine(p).contains(text))
                .map(p -> p.info().totalCpuDuration().orElse(Duration.ZERO))
                .reduce(Duration.ZERO, Duration::plus);
    }

    /** CPU time this JVM (the load generator and the client under test) has used so far. */
    public static Duration thisProcess() {
        return ProcessHandle.current().info().totalCpuDuration()
                .orElseThrow(() -> new IllegalStateException("the CPU time of this process cannot be read"));
    }

    /** CPU time used so far, user and system, by every process. */
    public Duration used() {
        return usedByGroup().values().stream().reduce(Duration.ZERO, Duration::plus);
    }

    /** CPU time used so far by each group. */
    public Map<String, Duration> usedByGroup() {
        Map<String, Duration> used = new LinkedHashMap<>();
        groups.forEach((name, processes) -> used.put(name, processes.stream().map(p -> p.info().totalCpuDuration()
                .orElseThrow(() -> new IllegalStateException("the CPU time of process " + p.pid() + " cannot be read")))
                .reduce(Duration.ZERO, Duration::plus)));
        return used;
    }

    /** Whether the processes come in more than one group. */
    public boolean grouped() {
        return groups.size() > 1;
    }
}
