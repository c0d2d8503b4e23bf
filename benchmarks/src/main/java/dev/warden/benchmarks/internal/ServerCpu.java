package dev.warden.benchmarks.internal;

import dev.warden.testkit.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The CPU time a server process has used so far, read from the operating system, so a run can say
 * how much of the server's one core each operation cost: the figure that shows whether a client
 * or the server is the limit.
 */
public final class ServerCpu {

    private final ProcessHandle process;

    private ServerCpu(ProcessHandle process) {
        this.process = process;
    }

    /** The redis-server process serving {@code redis}'s port: a child of this JVM, launched by testkit. */
    public static ServerCpu of(RedisServer redis) {
        // redis-server rewrites its command line to its process title, "redis-server host:port".
        String address = ":" + redis.port();
        return ProcessHandle.current().descendants()
                .filter(p -> commandLine(p).contains("redis-server") && commandLine(p).contains(address))
                .findFirst()
                .map(ServerCpu::new)
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

    /** CPU time used so far, user and system. */
    public Duration used() {
        return process.info().totalCpuDuration()
                .orElseThrow(() -> new IllegalStateException("the CPU time of process " + process.pid() + " cannot be read"));
    }
}
