package dev.warden.testkit;

import dev.warden.testkit.internal.ExternalRedis;
import dev.warden.testkit.internal.RedisContainer;
import dev.warden.testkit.internal.RedisNode;
import dev.warden.testkit.internal.RedisProcess;
import dev.warden.testkit.internal.RespConnection;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * A real Redis server for an integration test, with fault controls, so tests exercise the network
 * and the server rather than a mock.
 *
 * <p>{@link #start()} and {@link Builder#start()} resolve the server in this order:
 *
 * <ol>
 *   <li>{@code WARDEN_REDIS_URI} (for example {@code redis://127.0.0.1:6379}): that server is used
 *       as is, builder options are applied with {@code CONFIG SET}, and fault controls throw
 *       {@link UnsupportedOperationException};
 *   <li>a {@code redis-server} binary ({@code WARDEN_REDIS_SERVER}, else on {@code PATH}) launched
 *       on a free 127.0.0.1 port in a fresh temporary directory, without RDB snapshots and without
 *       an append-only file unless asked; the process dies with the JVM;
 *   <li>{@code redis:7.2} through Testcontainers when a Docker engine answers (pause and resume
 *       only);
 *   <li>otherwise an {@link IllegalStateException} that says how to install Redis: a missing server
 *       fails the test rather than skipping it.
 * </ol>
 *
 * <p>{@link #command(String...)} reads the server directly over its own short-lived socket, so
 * assertions do not depend on the client under test.
 */
public final class RedisServer implements AutoCloseable {

    private static final String NOT_FOUND = "redis-server not found on PATH: install it (Debian/Ubuntu: apt-get install -y"
            + " redis-server), or set WARDEN_REDIS_SERVER to the binary, or WARDEN_REDIS_URI to a running server";

    private static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(3);

    private final RedisNode node;

    RedisServer(RedisNode node) {
        this.node = node;
    }

    /** Starts a server with default options. */
    public static RedisServer start() {
        return builder().start();
    }

    /** Options for the server to start. */
    public static Builder builder() {
        return new Builder();
    }

    /** The host clients connect to. */
    public String host() {
        return node.host();
    }

    /** The port clients connect to; it stays the same across {@link #restart()}. */
    public int port() {
        return node.port();
    }

    /** {@code redis://host:port}. */
    public String uri() {
        return "redis://" + host() + ":" + port();
    }

    /**
     * {@code true} while the server process exists, including while paused; always {@code true}
     * for a {@code WARDEN_REDIS_URI} server, which testkit does not manage.
     */
    public boolean isRunning() {
        return node.isRunning();
    }

    /** {@code true} between {@link #pause()} and {@link #resume()}. */
    public boolean isPaused() {
        return node.isPaused();
    }

    /**
     * Freezes the server (SIGSTOP): connections stay open and nothing answers, like a long GC pause
     * or a stalled host.
     */
    public void pause() {
        node.pause();
    }

    /** Unfreezes a paused server (SIGCONT); it then serves what queued up meanwhile. */
    public void resume() {
        node.resume();
    }

    /** Kills the server (SIGKILL) without letting it flush anything, and waits until it is gone. */
    public void kill() {
        node.kill();
    }

    /**
     * Starts the server again on the same port and directory, so an append-only file is replayed,
     * and waits until it answers PONG (not merely LOADING). A running server is shut down gracefully
     * first.
     */
    public void restart() {
        node.restart();
    }

    /** Shuts the server down (resuming it first if paused) and deletes its directory; idempotent. */
    public void stop() {
        node.stop();
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    /**
     * Sends one command over a fresh socket with a 3 s timeout and returns the reply: {@link String}
     * for simple and bulk strings, {@link Long} for integers, an unmodifiable {@link java.util.List}
     * for arrays, {@code null} for nil.
     *
     * @throws RedisReplyException if the server answers with an error
     * @throws java.io.UncheckedIOException if it cannot be reached or does not answer in time
     */
    public Object command(String... args) {
        return command(DEFAULT_COMMAND_TIMEOUT, args);
    }

    /** {@link #command(String...)} with the given connect and read timeout. */
    public Object command(Duration timeout, String... args) {
        return RespConnection.callOnce(host(), port(), timeout, args);
    }

    /**
     * {@link #command(String...)} as an ACL user: {@code AUTH user password} first on the same fresh
     * socket, so a test can show what that user may and may not do.
     *
     * @throws RedisReplyException if the server refuses the login or the command
     */
    public Object commandAs(String user, String password, String... args) {
        try (RespConnection connection = RespConnection.open(host(), port(), DEFAULT_COMMAND_TIMEOUT)) {
            connection.call("AUTH", user, password);
            return connection.call(args);
        }
    }

    @Override
    public String toString() {
        return "RedisServer[" + uri() + "]";
    }

    /** Server options; each maps to a {@code redis-server} configuration directive. */
    public static final class Builder {

        private static final Set<String> RESERVED = Set.of("port", "bind", "daemonize", "dir", "logfile");
        private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);

        private final Map<String, String> options = new LinkedHashMap<>();
        private Function<String, String> env = System::getenv;

        private Builder() {
        }

        /** Turns the append-only file on or off (off by default). */
        public Builder appendOnly(boolean enabled) {
            return config("appendonly", enabled ? "yes" : "no");
        }

        /** Fsyncs the append-only file after every write, so a write acknowledged before {@link RedisServer#kill()} survives it. */
        public Builder appendFsyncAlways() {
            return config("appendfsync", "always");
        }

        /** Caps memory, for example {@code "2mb"}, to provoke OOM replies or evictions. */
        public Builder maxMemory(String size) {
            return config("maxmemory", size);
        }

        /**
         * Any other directive, for example {@code config("maxmemory-policy", "allkeys-lru")}. The
         * port, bind address, directory, log file and daemonize belong to testkit.
         */
        public Builder config(String name, String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            if (RESERVED.contains(name)) {
                throw new IllegalArgumentException("'" + name + "' is managed by testkit and cannot be configured");
            }
            options.put(name, value);
            return this;
        }

        Builder environment(Function<String, String> environment) {
            this.env = Objects.requireNonNull(environment);
            return this;
        }

        /** Resolves and starts the server; see {@link RedisServer} for the order. */
        public RedisServer start() {
            String uri = env.apply("WARDEN_REDIS_URI");
            if (uri != null && !uri.isBlank()) {
                return new RedisServer(ExternalRedis.connect(uri, options, CONNECT_TIMEOUT));
            }
            Map<String, String> launchOptions = new LinkedHashMap<>();
            launchOptions.put("save", "");
            launchOptions.put("appendonly", "no");
            launchOptions.putAll(options);
            Optional<Path> binary = RedisProcess.findBinary(env);
            if (binary.isPresent()) {
                return new RedisServer(RedisProcess.launch(binary.get(), launchOptions));
            }
            if (RedisContainer.dockerAvailable()) {
                return new RedisServer(RedisContainer.launch(launchOptions));
            }
            throw new IllegalStateException(NOT_FOUND);
        }
    }
}
