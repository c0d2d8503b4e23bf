package dev.warden.testkit.internal;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A {@code redis-server} child process on a loopback port, with its own temporary directory that
 * survives {@link #kill()} and {@link #restart()} so an append-only file is replayed.
 */
public final class RedisProcess implements RedisNode {

    private static final String HOST = "127.0.0.1";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration PING_TIMEOUT = Duration.ofMillis(500);
    private static final long EXIT_TIMEOUT_SECONDS = 10;
    private static final int LAUNCH_ATTEMPTS = 3;
    private static final int LOG_TAIL_LINES = 30;

    private final Path binary;
    private final Path dir;
    private final int port;
    private final List<String> command;
    private final Runnable exitCleanup = this::destroyAndDelete;

    private volatile Process process;
    private boolean paused;
    private boolean stopped;

    private RedisProcess(Path binary, Path dir, int port, Map<String, String> config) {
        this.binary = binary;
        this.dir = dir;
        this.port = port;
        List<String> cmd = new ArrayList<>(List.of(binary.toString(),
                "--port", Integer.toString(port),
                "--bind", HOST,
                "--daemonize", "no",
                "--dir", dir.toString(),
                "--logfile", log().toString()));
        config.forEach((name, value) -> {
            cmd.add("--" + name);
            cmd.add(value);
        });
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
     * Starts {@code binary} on a free port with {@code config} as command-line options and waits
     * until it answers PONG. Retries on another port if the chosen one was taken meanwhile.
     */
    public static RedisProcess launch(Path binary, Map<String, String> config) {
        for (int attempt = 1; ; attempt++) {
            RedisProcess redis = new RedisProcess(binary, createTempDir(), FreePorts.find(), config);
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
        Process current = process;
        return current != null && current.isAlive();
    }

    @Override
    public synchronized boolean isPaused() {
        return paused;
    }

    @Override
    public synchronized void pause() {
        requireRunning("pause");
        signal("STOP");
        paused = true;
    }

    @Override
    public synchronized void resume() {
        requireRunning("resume");
        signal("CONT");
        paused = false;
    }

    @Override
    public synchronized void kill() {
        requireNotStopped("kill");
        Process current = process;
        if (current.isAlive()) {
            current.destroyForcibly();
            awaitExit(current);
        }
        paused = false;
    }

    @Override
    public synchronized void restart() {
        requireNotStopped("restart");
        shutDown();
        startAndAwait();
    }

    @Override
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        shutDown();
        ExitCleanup.remove(exitCleanup);
        deleteDir();
    }

    private void startAndAwait() {
        ExitCleanup.add(exitCleanup);
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.log").toFile()));
        Process started;
        try {
            started = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + binary, e);
        }
        process = started;
        boolean answered = Wait.until(START_TIMEOUT,
                () -> !started.isAlive() || RespConnection.answersPong(HOST, port, PING_TIMEOUT));
        if (!started.isAlive()) {
            throw new IllegalStateException("redis-server on port " + port + " exited with code "
                    + started.exitValue() + "; log tail:\n" + logTail());
        }
        if (!answered) {
            started.destroyForcibly();
            awaitExit(started);
            throw new IllegalStateException("redis-server on port " + port + " did not answer PING within "
                    + START_TIMEOUT.toSeconds() + " s; log tail:\n" + logTail());
        }
    }

    /** Terminates the current process, gracefully if possible; a paused process is resumed first. */
    private void shutDown() {
        Process current = process;
        if (current == null || !current.isAlive()) {
            paused = false;
            return;
        }
        if (paused) {
            signal("CONT");
            paused = false;
        }
        current.destroy();
        try {
            if (!current.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                current.destroyForcibly();
                awaitExit(current);
            }
        } catch (InterruptedException e) {
            current.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while stopping redis-server on port " + port, e);
        }
    }

    private void signal(String signal) {
        long pid = process.pid();
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid))
                    .redirectErrorStream(true)
                    .start();
            String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + output);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run kill -" + signal + " " + pid, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending SIG" + signal + " to " + pid, e);
        }
    }

    private void awaitExit(Process target) {
        try {
            if (!target.waitFor(EXIT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("redis-server pid " + target.pid() + " did not exit after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for redis-server pid " + target.pid(), e);
        }
    }

    private void requireRunning(String action) {
        requireNotStopped(action);
        if (!isRunning()) {
            throw new IllegalStateException("cannot " + action + " redis-server on port " + port
                    + ": it is not running (killed? call restart())");
        }
    }

    private void requireNotStopped(String action) {
        if (stopped) {
            throw new IllegalStateException("cannot " + action + " redis-server on port " + port + ": it was stopped");
        }
    }

    private void destroyAndDelete() {
        Process current = process;
        if (current != null) {
            current.destroyForcibly();
        }
        deleteDir();
    }

    private Path log() {
        return dir.resolve("redis.log");
    }

    private String logTail() {
        StringBuilder tail = new StringBuilder();
        for (Path file : List.of(dir.resolve("stdout.log"), log())) {
            try {
                if (Files.exists(file)) {
                    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
                    lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size())
                            .forEach(line -> tail.append(line).append('\n'));
                }
            } catch (IOException e) {
                tail.append("(cannot read ").append(file).append(": ").append(e.getMessage()).append(")\n");
            }
        }
        return tail.toString();
    }

    private static Path createTempDir() {
        try {
            return Files.createTempDirectory("warden-redis-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for redis-server", e);
        }
    }

    private void deleteDir() {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // Best effort: a leftover directory under the temp dir must not fail a test.
        }
    }
}
