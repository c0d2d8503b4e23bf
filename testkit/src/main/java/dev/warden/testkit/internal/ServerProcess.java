package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The child process of one launched server and the fault controls every server kind shares:
 * SIGSTOP/SIGCONT with the paused flag, SIGKILL and waiting for the exit, graceful shutdown, and a
 * JVM-exit hook that kills the process and deletes the server's directory. Not thread-safe: the
 * owner calls it under its own lock.
 */
final class ServerProcess {

    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    /** How far signals and kills reach. */
    enum Reach {
        /** The launched process alone. */
        PROCESS,
        /**
         * The launched process and every process below it: a PostgreSQL postmaster's children are
         * session leaders of their own, so neither the postmaster's death nor its process group
         * reaches them.
         */
        TREE
    }

    static final Duration EXIT_TIMEOUT = Duration.ofSeconds(10);

    private final Path dir;
    private final Supplier<String> label;
    private final Reach reach;
    private final Runnable exitCleanup = this::destroyAndDelete;

    private volatile Process process;
    private boolean paused;
    private List<Long> pausedDescendants = List.of();

    /**
     * @param dir the server's own directory, deleted by {@link #deleteDirectory()} and at JVM exit
     * @param label names the server in failure messages, e.g. {@code redis-server on port 6379}
     */
    ServerProcess(Path dir, Supplier<String> label, Reach reach) {
        this.dir = dir;
        this.label = label;
        this.reach = reach;
    }

    /** Registers the JVM-exit hook; {@link #launch} does so too. */
    void cleanUpAtExit() {
        ExitCleanup.add(exitCleanup);
    }

    /** Starts {@code command} in the server's directory with stdout and stderr appended to {@code log}. */
    Process launch(List<String> command, Path log, String what) {
        return launch(() -> {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .directory(dir.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
            try {
                return builder.start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start " + what, e);
            }
        });
    }

    /** Makes the process that {@code start} starts the current one, not paused. */
    Process launch(Supplier<Process> start) {
        cleanUpAtExit();
        Process started = start.get();
        process = started;
        paused = false;
        return started;
    }

    /** The current process, or {@code null} before the first launch. */
    Process current() {
        return process;
    }

    boolean isRunning() {
        Process current = process;
        return current != null && current.isAlive();
    }

    boolean isPaused() {
        return paused;
    }

    /** SIGSTOP; for a tree, to the root first so that it forks nothing new, then to every process below it. */
    void pause() {
        long root = process.pid();
        if (reach == Reach.TREE) {
            PostgresExec.signal("STOP", root);
            List<Long> descendants = PostgresExec.descendants(root).stream().map(ProcessHandle::pid).toList();
            PostgresExec.signalQuietly("STOP", descendants);
            pausedDescendants = descendants;
            ProcessSignals.awaitStopped(root, STOP_TIMEOUT);
            descendants.forEach(pid -> ProcessSignals.awaitStopped(pid, STOP_TIMEOUT));
        } else {
            ProcessSignals.send(process, "STOP");
            ProcessSignals.awaitStopped(root, STOP_TIMEOUT);
        }
        paused = true;
    }

    /** SIGCONT; for a tree, to the processes below the root (those paused and any new ones) before the root. */
    void resume() {
        Process current = process;
        if (reach == Reach.TREE) {
            Set<Long> descendants = new LinkedHashSet<>(pausedDescendants);
            PostgresExec.descendants(current.pid()).forEach(child -> descendants.add(child.pid()));
            PostgresExec.signalQuietly("CONT", descendants);
            PostgresExec.signal("CONT", current.pid());
        } else {
            ProcessSignals.send(current, "CONT");
        }
        paused = false;
        pausedDescendants = List.of();
    }

    /** SIGKILL to whatever {@link Reach} covers, and waits until it is gone. */
    void kill() {
        Process current = process;
        if (current != null && current.isAlive()) {
            kill(current);
        }
        paused = false;
        pausedDescendants = List.of();
    }

    /**
     * Asks the process to exit with {@code request} (resuming it first if paused) and kills it if
     * it has not exited within {@code grace}.
     */
    void shutDown(Consumer<Process> request, Duration grace) {
        Process current = process;
        if (current == null || !current.isAlive()) {
            paused = false;
            pausedDescendants = List.of();
            return;
        }
        if (paused) {
            resume();
        }
        request.accept(current);
        try {
            if (!current.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
                kill(current);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            destroy();
            throw new IllegalStateException("interrupted while stopping " + label.get(), e);
        }
    }

    /** Kills what {@link Reach} covers without signalling helpers or polling: for exit hooks and failed shutdowns. */
    void destroy() {
        Process current = process;
        if (current == null) {
            return;
        }
        if (reach == Reach.TREE) {
            List<ProcessHandle> descendants = PostgresExec.descendants(current.pid());
            current.destroyForcibly();
            descendants.forEach(ProcessHandle::destroyForcibly);
            try {
                current.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            current.destroyForcibly();
        }
    }

    /** Removes the exit hook and deletes the server's directory, best effort. */
    void deleteDirectory() {
        ExitCleanup.remove(exitCleanup);
        deleteDir();
    }

    /** Waits until {@code target} has exited after a SIGKILL. */
    void awaitExit(Process target) {
        try {
            if (!target.waitFor(EXIT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException(label.get() + " (pid " + target.pid() + ") did not exit after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + label.get() + " to exit", e);
        }
    }

    /**
     * The last {@code count} lines of {@code file}, each ending in a newline; empty if there is no
     * such file. Bytes that are not UTF-8 are replaced rather than failing the whole tail.
     */
    static String tail(Path file, int count) {
        try {
            if (!Files.exists(file)) {
                return "";
            }
            List<String> lines = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList();
            StringBuilder tail = new StringBuilder();
            lines.subList(Math.max(0, lines.size() - count), lines.size()).forEach(line -> tail.append(line).append('\n'));
            return tail.toString();
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")\n";
        }
    }

    /** A fresh temporary directory whose name starts with {@code prefix}, under {@code parent} if given. */
    static Path createTempDir(Path parent, String prefix, String what) {
        try {
            return parent == null ? Files.createTempDirectory(prefix) : Files.createTempDirectory(parent, prefix);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for " + what, e);
        }
    }

    /**
     * For a tree, the root is stopped first so that it forks nothing between the snapshot of its
     * descendants and the kill; waits until all are gone, so ports and shared memory are free again.
     */
    private void kill(Process root) {
        if (reach == Reach.PROCESS) {
            root.destroyForcibly();
            awaitExit(root);
            return;
        }
        PostgresExec.signalQuietly("STOP", List.of(root.pid()));
        List<ProcessHandle> descendants = PostgresExec.descendants(root.pid());
        root.destroyForcibly();
        descendants.forEach(ProcessHandle::destroyForcibly);
        awaitExit(root);
        if (!Wait.until(EXIT_TIMEOUT, () -> descendants.stream().allMatch(PostgresExec::isGone))) {
            throw new IllegalStateException("children of " + label.get() + " (pid " + root.pid() + ") survived SIGKILL: "
                    + descendants.stream().filter(child -> !PostgresExec.isGone(child)).map(ProcessHandle::pid).toList());
        }
    }

    private void destroyAndDelete() {
        destroy();
        deleteDir();
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
