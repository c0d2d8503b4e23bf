package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * One ZooKeeper server in a child JVM launched from ZooKeeper's own jar
 * ({@code QuorumPeerMain <cfg>}), so a test can freeze it with SIGSTOP, kill it with SIGKILL and
 * start it again on the same ports and data directory: sessions and nodes survive a restart,
 * as on a real server. The data directory is deleted by {@link #stop()} and at JVM exit.
 */
public final class ZooKeeperProcess {

    private static final String HOST = "127.0.0.1";
    private static final Duration FOUR_LETTER_TIMEOUT = Duration.ofMillis(500);
    private static final int LOG_TAIL_LINES = 40;

    private final Path dir;
    private final int clientPort;
    private final String label;
    private final List<String> command;
    private final ServerProcess server;
    private boolean stopped;

    /**
     * @param dir a fresh directory for the configuration, data and log
     * @param myId the server's id in its ensemble, 0 for a standalone server
     * @param config the {@code zoo.cfg} lines other than {@code dataDir}
     * @param systemProperties {@code -D} options of the server's JVM, as {@code name=value}
     */
    public ZooKeeperProcess(Path dir, int myId, int clientPort, List<String> config, List<String> systemProperties) {
        this(dir, myId, clientPort, config, systemProperties, false);
    }

    /** @param netty whether the server runs on Netty (a secure client port), which needs more on its class path */
    public ZooKeeperProcess(Path dir, int myId, int clientPort, List<String> config, List<String> systemProperties,
                            boolean netty) {
        this.dir = dir;
        this.clientPort = clientPort;
        this.label = "ZooKeeper " + (myId == 0 ? "" : "server " + myId + " ") + "on port " + clientPort;
        this.server = new ServerProcess(dir, () -> label, ServerProcess.Reach.PROCESS);
        Path data = dir.resolve("data");
        Path cfg = dir.resolve("zoo.cfg");
        try {
            Files.createDirectories(data);
            if (myId != 0) {
                Files.writeString(data.resolve("myid"), Integer.toString(myId), StandardCharsets.US_ASCII);
            }
            List<String> lines = new ArrayList<>(config);
            lines.add("dataDir=" + data);
            Files.write(cfg, lines, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot prepare " + dir + " for " + label, e);
        }
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xms16m", "-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
                "-Djava.awt.headless=true",
                "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.jmx.log4j.disable=true",
                // Data written before a SIGKILL is in the page cache and survives it; skip fsync.
                "-Dzookeeper.forceSync=no",
                "-Dzookeeper.preAllocSize=1024",
                "-Dzookeeper.snapshot.trust.empty=true",
                // A peer that is down is noticed after 1 s rather than 5 s during elections.
                "-Dzookeeper.cnxTimeout=1000",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.logFile=System.out"));
        systemProperties.forEach(p -> command.add("-D" + p));
        command.addAll(List.of("-cp", netty ? ZooKeeperClassPath.withNetty() : ZooKeeperClassPath.get(),
                "org.apache.zookeeper.server.quorum.QuorumPeerMain", cfg.toString()));
        this.command = List.copyOf(command);
    }

    /** A fresh temporary directory for one server. */
    public static Path createTempDir() {
        return ServerProcess.createTempDir(null, "warden-zookeeper-", "a ZooKeeper server");
    }

    public String host() {
        return HOST;
    }

    public int clientPort() {
        return clientPort;
    }

    public synchronized boolean isRunning() {
        return server.isRunning();
    }

    public synchronized boolean isPaused() {
        return server.isPaused();
    }

    /** Starts the JVM without waiting; see {@link #awaitServing(Duration)}. */
    public synchronized void launch() {
        requireNotStopped("start");
        if (server.isRunning()) {
            throw new IllegalStateException(label + " is already running");
        }
        server.launch(command, log(), "the JVM for " + label);
    }

    /**
     * Waits until the server serves requests ({@code srvr} reports a mode), which for an ensemble
     * member needs a quorum.
     *
     * @throws IllegalStateException with the log's tail if the JVM exits or the time runs out
     */
    public void awaitServing(Duration timeout) {
        Process started = server.current();
        boolean serving = Wait.until(timeout, () -> !started.isAlive() || mode().isPresent());
        if (!started.isAlive()) {
            throw new IllegalStateException(label + " exited with code " + started.exitValue() + "; log tail:\n"
                    + logTail());
        }
        if (!serving) {
            throw new IllegalStateException(label + " did not serve requests (srvr) within " + timeout.toSeconds()
                    + " s; log tail:\n" + logTail());
        }
    }

    /** {@code standalone}, {@code leader} or {@code follower}; empty when not serving or not answering. */
    public Optional<String> mode() {
        return FourLetterWords.mode(HOST, clientPort, FOUR_LETTER_TIMEOUT);
    }

    /** Whether the log says the port was taken, so a launcher can retry on other ports. */
    public boolean portWasTaken() {
        return logTail().contains("Address already in use");
    }

    public synchronized void pause() {
        requireRunning("pause");
        server.pause();
    }

    public synchronized void resume() {
        requireRunning("resume");
        server.resume();
    }

    /** SIGKILL, and waits until the process is gone. */
    public synchronized void kill() {
        requireNotStopped("kill");
        server.kill();
    }

    /** Terminates the JVM (resuming it first if paused) and deletes the directory; idempotent. */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        server.shutDown(Process::destroy, ServerProcess.EXIT_TIMEOUT);
        server.deleteDirectory();
    }

    /** The last lines of the server's log, for failure messages. */
    public String logTail() {
        Path file = log();
        return Files.exists(file) ? ServerProcess.tail(file, LOG_TAIL_LINES) : "(no log yet)\n";
    }

    @Override
    public String toString() {
        return label;
    }

    private Path log() {
        return dir.resolve("zookeeper.log");
    }

    private void requireRunning(String action) {
        requireNotStopped(action);
        if (!server.isRunning()) {
            throw new IllegalStateException("cannot " + action + " " + label + ": it is not running (killed? call restart())");
        }
    }

    private void requireNotStopped(String action) {
        if (stopped) {
            throw new IllegalStateException("cannot " + action + " " + label + ": it was stopped");
        }
    }
}
