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
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * One {@code etcd} member as a child process on loopback ports, with its own data directory that
 * survives {@link #kill()} and {@link #restart()}: a restarted member rejoins its cluster with its
 * data (the initial-cluster flags are ignored once the directory holds a member).
 */
public final class EtcdProcess {

    public static final String HOST = "127.0.0.1";
    private static final Duration HEALTH_TIMEOUT = Duration.ofMillis(500);
    private static final long EXIT_TIMEOUT_SECONDS = 10;
    private static final int LOG_TAIL_LINES = 30;

    private final Path binary;
    private final String name;
    private final int clientPort;
    private final int peerPort;
    private final Path dir;
    private final Runnable exitCleanup = this::destroyAndDelete;
    private List<String> command;

    private volatile Process process;
    private boolean paused;
    private boolean stopped;

    /** A member not started yet; {@link #initialCluster} must be called before {@link #launch()}. */
    public EtcdProcess(Path binary, String name) {
        this.binary = binary;
        this.name = name;
        this.clientPort = FreePorts.find();
        int peer = FreePorts.find();
        while (peer == clientPort) {
            peer = FreePorts.find();
        }
        this.peerPort = peer;
        this.dir = createTempDir();
    }

    /**
     * The binary named by {@code WARDEN_ETCD}, else {@code etcd} on {@code PATH}.
     *
     * @throws IllegalStateException if {@code WARDEN_ETCD} names something that is not executable
     */
    public static Optional<Path> findBinary(Function<String, String> env) {
        String explicit = env.apply("WARDEN_ETCD");
        if (explicit != null && !explicit.isBlank()) {
            Path path = Path.of(explicit);
            if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
                throw new IllegalStateException("WARDEN_ETCD=" + explicit + " is not an executable file");
            }
            return Optional.of(path);
        }
        String searchPath = env.apply("PATH");
        if (searchPath == null) {
            return Optional.empty();
        }
        return Stream.of(searchPath.split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry, "etcd"))
                .filter(candidate -> Files.isRegularFile(candidate) && Files.isExecutable(candidate))
                .findFirst();
    }

    public String name() {
        return name;
    }

    public int clientPort() {
        return clientPort;
    }

    public String clientUrl() {
        return "http://" + HOST + ":" + clientPort;
    }

    public String peerUrl() {
        return "http://" + HOST + ":" + peerPort;
    }

    /** Sets the cluster this member bootstraps into: {@code name=peerUrl,...} for every member. */
    public synchronized void initialCluster(String initialCluster, String token) {
        command = List.of(binary.toString(),
                "--name", name,
                "--data-dir", dir.resolve("data").toString(),
                "--listen-client-urls", clientUrl(),
                "--advertise-client-urls", clientUrl(),
                "--listen-peer-urls", peerUrl(),
                "--initial-advertise-peer-urls", peerUrl(),
                "--initial-cluster", initialCluster,
                "--initial-cluster-token", token,
                "--initial-cluster-state", "new",
                "--logger", "zap",
                "--log-outputs", "stderr");
    }

    /** Starts the process without waiting: members of a cluster only turn healthy together. */
    public synchronized void launch() {
        if (command == null) {
            throw new IllegalStateException("initialCluster() was not called for etcd member " + name);
        }
        ExitCleanup.add(exitCleanup);
        ProcessBuilder builder = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + binary, e);
        }
    }

    /** Waits until {@code /health} answers true (up, with a leader); fails with the log tail. */
    public void awaitHealthy(Duration timeout) {
        Process started = process;
        boolean healthy = Wait.until(timeout,
                () -> !started.isAlive() || EtcdHttp.healthy(clientUrl(), HEALTH_TIMEOUT));
        if (!started.isAlive()) {
            throw new IllegalStateException("etcd member " + name + " (client port " + clientPort + ") exited with code "
                    + started.exitValue() + "; log tail:\n" + logTail());
        }
        if (!healthy) {
            throw new IllegalStateException("etcd member " + name + " (client port " + clientPort
                    + ") did not report healthy within " + timeout.toSeconds() + " s; log tail:\n" + logTail());
        }
    }

    public boolean isRunning() {
        Process current = process;
        return current != null && current.isAlive();
    }

    public synchronized boolean isPaused() {
        return paused;
    }

    public synchronized void pause() {
        requireRunning("pause");
        signal("STOP");
        paused = true;
    }

    public synchronized void resume() {
        requireRunning("resume");
        signal("CONT");
        paused = false;
    }

    /** SIGKILL, and waits until the process is gone. */
    public synchronized void kill() {
        requireNotStopped("kill");
        Process current = process;
        if (current != null && current.isAlive()) {
            current.destroyForcibly();
            awaitExit(current);
        }
        paused = false;
    }

    /** Starts again on the same ports and data directory (a running member is stopped first); does not wait. */
    public synchronized void relaunch() {
        requireNotStopped("restart");
        shutDown();
        launch();
    }

    /** Stops the process (resuming it first if paused) and deletes its directory; idempotent. */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        shutDown();
        ExitCleanup.remove(exitCleanup);
        deleteDir();
    }

    public String logTail() {
        try {
            if (!Files.exists(log())) {
                return "";
            }
            List<String> lines = Files.readAllLines(log(), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
        } catch (IOException e) {
            return "(cannot read " + log() + ": " + e.getMessage() + ")";
        }
    }

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
            throw new IllegalStateException("interrupted while stopping etcd member " + name, e);
        }
    }

    private void signal(String signal) {
        long pid = process.pid();
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
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
                throw new IllegalStateException("etcd pid " + target.pid() + " did not exit after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for etcd pid " + target.pid(), e);
        }
    }

    private void requireRunning(String action) {
        requireNotStopped(action);
        if (!isRunning()) {
            throw new IllegalStateException("cannot " + action + " etcd member " + name
                    + ": it is not running (killed? call restart())");
        }
    }

    private void requireNotStopped(String action) {
        if (stopped) {
            throw new IllegalStateException("cannot " + action + " etcd member " + name + ": it was stopped");
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
        return dir.resolve("etcd.log");
    }

    /** In RAM when {@code /dev/shm} is there: etcd fsyncs every write, and the tests measure locks, not disks. */
    private static Path createTempDir() {
        try {
            Path shm = Path.of("/dev/shm");
            if (Files.isDirectory(shm) && Files.isWritable(shm)) {
                return Files.createTempDirectory(shm, "warden-etcd-");
            }
            return Files.createTempDirectory("warden-etcd-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for etcd", e);
        }
    }

    private void deleteDir() {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // Best effort: a leftover directory must not fail a test.
        }
    }

    /** Every member's {@code name=peerUrl}, for {@link #initialCluster}. */
    public static String initialClusterOf(List<EtcdProcess> members) {
        List<String> parts = new ArrayList<>();
        for (EtcdProcess m : members) {
            parts.add(m.name() + "=" + m.peerUrl());
        }
        return String.join(",", parts);
    }
}
