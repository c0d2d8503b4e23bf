package dev.warden.quota.ledger;

import dev.warden.quota.ledger.child.LedgerChild;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A {@link LedgerChild} process and its controls: events read from its output, SIGKILL, SIGSTOP, SIGCONT. */
final class ChildConsumer implements AutoCloseable {

    final String name;
    final Path dir;
    final Path log;
    private final Process process;

    private ChildConsumer(String name, Path dir, Process process) {
        this.name = name;
        this.dir = dir;
        this.log = dir.resolve("out.log");
        this.process = process;
    }

    static ChildConsumer start(String name, String redisUri, String jdbcUrl) throws IOException {
        Path dir = Files.createTempDirectory("ledger-" + name);
        Process p = new ProcessBuilder(ConsumerCrashTest.javaBinary(), "-Xmx256m", "-cp", ConsumerCrashTest.testClassPath(),
                LedgerChild.class.getName(), redisUri, jdbcUrl, name, dir.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("out.log").toFile()).start();
        ChildConsumer child = new ChildConsumer(name, dir, p);
        Support.await("consumer " + name + " started (log " + child.log + ")", () -> child.saw("STARTED"));
        return child;
    }

    long pid() {
        return process.pid();
    }

    List<String> lines() {
        try {
            return Files.readAllLines(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return List.of();
        }
    }

    boolean saw(String prefix) {
        return lines().stream().anyMatch(l -> l.startsWith(prefix));
    }

    long count(String prefix) {
        return lines().stream().filter(l -> l.startsWith(prefix)).count();
    }

    /**
     * Stops the consumer (SIGSTOP) inside the next batch's transaction, right after its fence statement has locked
     * the partition's row (where a frozen process keeps the row locked until something ends its session); returns
     * once it is stopped.
     */
    void freezeInsideNextBatch() throws IOException, InterruptedException {
        freezeAt("freeze-in-transaction", "FREEZING-IN-TRANSACTION");
    }

    /**
     * Stops the consumer (SIGSTOP) right before its next batch's database work, after it checked its lease; returns
     * once it is stopped.
     */
    void freezeAtNextBatch() throws IOException, InterruptedException {
        freezeAt("freeze", "FREEZING");
    }

    /**
     * The child's thread says {@code line} at the chosen point and waits there for the file {@code resume}; it is
     * stopped from here, then given the file, so it stays at that point until {@link #resume}.
     */
    private void freezeAt(String control, String line) throws IOException, InterruptedException {
        Files.deleteIfExists(dir.resolve("resume"));
        Files.createFile(dir.resolve(control));
        Support.await("consumer " + name + " reached the freeze point (log " + log + ")",
                () -> lines().stream().anyMatch(line::equals));
        signal("-STOP");
        Support.await("consumer " + name + " stopped (log " + log + ")", this::stopped);
        Files.createFile(dir.resolve("resume"));
    }

    void resume() throws IOException, InterruptedException {
        signal("-CONT");
    }

    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("consumer " + name + " did not die");
        }
    }

    boolean alive() {
        return process.isAlive();
    }

    /** Whether the process is stopped (state T in /proc). */
    boolean stopped() {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid()), "stat"));
            return stat.substring(stat.lastIndexOf(')') + 2).startsWith("T");
        } catch (IOException e) {
            return false;
        }
    }

    private void signal(String signal) throws IOException, InterruptedException {
        if (new ProcessBuilder("kill", signal, Long.toString(pid())).inheritIO().start().waitFor() != 0) {
            throw new AssertionError("kill " + signal + " " + pid() + " failed");
        }
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive()) {
            signal("-CONT");
            kill();
        }
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
        }
        Files.deleteIfExists(dir);
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ", log " + log + ")";
    }
}
