package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;

/** Sends POSIX signals with {@code kill}: SIGSTOP freezes a whole process, a JVM included. */
final class ProcessSignals {

    private ProcessSignals() {
    }

    static void send(Process process, String signal) {
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

    /**
     * Waits until every thread of {@code pid} is stopped. SIGSTOP is not instant: one thread takes
     * the signal and only then stops the others, so under load a "paused" server can go on answering
     * for milliseconds after {@code kill} returns. Without {@code /proc} (not Linux) it returns at once.
     */
    static void awaitStopped(long pid, Duration timeout) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        if (!Files.isDirectory(Path.of("/proc", "self"))) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!allStopped(tasks)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("process " + pid + " did not stop within " + timeout.toMillis()
                        + " ms of SIGSTOP");
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for process " + pid + " to stop", e);
            }
        }
    }

    private static boolean allStopped(Path tasks) {
        try (Stream<Path> threads = Files.list(tasks)) {
            return threads.allMatch(ProcessSignals::stopped);
        } catch (IOException | UncheckedIOException gone) {
            // The process (or a thread) exited: nothing of it runs.
            return true;
        }
    }

    private static boolean stopped(Path thread) {
        try {
            String stat = Files.readString(thread.resolve("stat"), StandardCharsets.UTF_8);
            // The state follows the command name, which is in parentheses and may contain anything.
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state == 'T' || state == 't' || state == 'Z' || state == 'X';
        } catch (IOException | UncheckedIOException | StringIndexOutOfBoundsException gone) {
            return true;
        }
    }
}
