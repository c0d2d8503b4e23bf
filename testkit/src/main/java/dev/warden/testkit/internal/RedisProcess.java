package dev.warden.testkit.internal;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A {@code redis-server} child process on a loopback port, with its own temporary directory that
 * survives {@link #kill()} and {@link #restart()} so an append-only file (and a cluster node's
 * {@code nodes.conf}, a sentinel's rewritten configuration) is found again. It runs as a plain server,
 * a Redis Cluster node (its bus port, +10000, free too) or a Sentinel ({@code redis-server
 * sentinel.conf --sentinel}).
 */
public final class RedisProcess implements RedisNode {

    private static final String HOST = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration PING_TIMEOUT = Duration.ofMillis(500);
    private static final int LAUNCH_ATTEMPTS = 3;
    private static final int LOG_TAIL_LINES = 30;

    private final Path binary;
    private final Path dir;
    private final int port;
    private final List<String> command;
    private final ServerProcess server;
    private boolean stopped;

    /** What the process runs as. */
    public enum Role {
        /** A plain server (or a Sentinel's data node). */
        SERVER,
        /** A Redis Cluster node: its cluster bus port (+10000) must be free too. */
        CLUSTER_NODE,
        /** A Sentinel: {@code config} becomes {@code sentinel <name> <value>} lines of its configuration file. */
        SENTINEL
    }

    private RedisProcess(Path binary, Path dir, int port, Role role, Map<String, String> config) {
        this.binary = binary;
        this.dir = dir;
        this.port = port;
        this.server = new ServerProcess(dir, this::label, ServerProcess.Reach.PROCESS);
        List<String> cmd = new ArrayList<>(List.of(binary.toString()));
        if (role == Role.SENTINEL) {
            // Sentinel needs a configuration file it can rewrite; it survives restarts in the directory.
            Path file = dir.resolve("sentinel.conf");
            StringBuilder text = new StringBuilder();
            config.forEach((name, value) -> text.append("sentinel ").append(name).append(' ').append(value).append('\n'));
            try {
                Files.writeString(file, text.toString());
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException("cannot write " + file, e);
            }
            cmd.add(file.toString());
            cmd.add("--sentinel");
        }
        cmd.addAll(List.of(
                "--port", Integer.toString(port),
                "--bind", HOST,
                "--daemonize", "no",
                "--dir", dir.toString(),
                "--logfile", log().toString()));
        if (role != Role.SENTINEL) {
            config.forEach((name, value) -> {
                cmd.add("--" + name);
                cmd.add(value);
            });
        }
        this.command = List.copyOf(cmd);
    }

    /**
     * The binary named by {@code WARDEN_REDIS_SERVER}, else {@code redis-server} on {@code PATH}.
     *
     * @throws IllegalStateException if {@code WARDEN_REDIS_SERVER} names something that is not an
     *     executable file
     */
    public static Optional<Path> findBinary(Function<String, String> env) {
        String explicit = env.apply("WARDEN_REDIS_SERVER");
        if (explicit != null && !explicit.isBlank()) {
            Path path = Path.of(explicit);
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException("WARDEN_REDIS_SERVER=" + explicit + " is not an executable file");
            }
            return Optional.of(path);
        }
        String searchPath = env.apply("PATH");
        if (searchPath == null) {
            return Optional.empty();
        }
        return Stream.of(searchPath.split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry, "redis-server"))
                .filter(candidate -> Files.isRegularFile(candidate) && Files.isExecutable(candidate))
                .findFirst();
    }

    /**
     * {@code redis-cli}: named by {@code WARDEN_REDIS_CLI}, else beside {@code redisServer}, else on
     * {@code PATH}.
     */
    public static Optional<Path> findCli(Path redisServer, Function<String, String> env) {
        String explicit = env.apply("WARDEN_REDIS_CLI");
        if (explicit != null && !explicit.isBlank()) {
            return Optional.of(Path.of(explicit));
        }
        Path beside = redisServer.resolveSibling("redis-cli");
        if (Files.isRegularFile(beside) && Files.isExecutable(beside)) {
            return Optional.of(beside);
        }
        String searchPath = env.apply("PATH");
        if (searchPath == null) {
            return Optional.empty();
        }
        return Stream.of(searchPath.split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry, "redis-cli"))
                .filter(candidate -> Files.isRegularFile(candidate) && Files.isExecutable(candidate))
                .findFirst();
    }

    /**
     * Starts {@code binary} on a free port with {@code config} as command-line options and waits
     * until it answers PONG. Retries on another port if the chosen one was taken meanwhile.
     */
    public static RedisProcess launch(Path binary, Map<String, String> config) {
        return launch(binary, Role.SERVER, config);
    }

    /** {@link #launch(Path, Map)} as a plain server, a cluster node or a sentinel. */
    public static RedisProcess launch(Path binary, Role role, Map<String, String> config) {
        for (int attempt = 1; ; attempt++) {
            int port = role == Role.CLUSTER_NODE ? FreePorts.findWithClusterBus() : FreePorts.find();
            RedisProcess redis = new RedisProcess(binary,
                    ServerProcess.createTempDir(null, "warden-redis-", "redis-server"), port, role, config);
            try {
                redis.startAndAwait();
                return redis;
            } catch (IllegalStateException e) {
                boolean portTaken = redis.logTail().contains("Address already in use");
                redis.stop();
                if (!portTaken || attempt == LAUNCH_ATTEMPTS) {
                    throw e;
                }
            }
        }
    }

    @Override
    public String host() {
        return HOST;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public boolean isRunning() {
        return server.isRunning();
    }

    @Override
    public synchronized boolean isPaused() {
        return server.isPaused();
    }

    @Override
    public synchronized void pause() {
        requireRunning("pause");
        server.pause();
    }

    @Override
    public synchronized void resume() {
        requireRunning("resume");
        server.resume();
    }

    @Override
    public synchronized void kill() {
        requireNotStopped("kill");
        server.kill();
    }

    @Override
    public synchronized void restart() {
        requireNotStopped("restart");
        server.shutDown(Process::destroy, ServerProcess.EXIT_TIMEOUT);
        startAndAwait();
    }

    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        server.shutDown(Process::destroy, ServerProcess.EXIT_TIMEOUT);
        server.deleteDirectory();
    }

    private void startAndAwait() {
        Process started = server.launch(command, dir.resolve("stdout.log"), binary.toString());
        boolean answered = Wait.until(START_TIMEOUT,
                () -> !started.isAlive() || RespConnection.answersPong(HOST, port, PING_TIMEOUT));
        if (!started.isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " exited with code "
                    + started.exitValue() + "; log tail:\n" + logTail());
        }
        if (!answered) {
            started.destroyForcibly();
            server.awaitExit(started);
            throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                    + START_TIMEOUT.toSeconds() + " s; log tail:\n" + logTail());
        }
    }

    private void requireRunning(String action) {
        requireNotStopped(action);
        if (!server.isRunning()) {
            throw new IllegalStateException("cannot " + action + " " + label()
                    + ": it is not running (killed? call restart())");
        }
    }

    private void requireNotStopped(String action) {
        if (stopped) {
            throw new IllegalStateException("cannot " + action + " " + label() + ": it was stopped");
        }
    }

    private String label() {
        return "redis-server on port " + port;
    }

    private Path log() {
        return dir.resolve("redis.log");
    }

    private String logTail() {
        return ServerProcess.tail(dir.resolve("stdout.log"), LOG_TAIL_LINES) + ServerProcess.tail(log(), LOG_TAIL_LINES);
    }
}
