package dev.warden.testkit.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the short-lived PostgreSQL tools (initdb, pg_isready, psql, id, kill) with a deadline, and
 * signals process trees: a postmaster's children are session leaders of their own, so signalling
 * its process group does not reach them.
 */
public final class PostgresExec {

    private static final Executor DAEMON = task -> {
        Thread thread = new Thread(task, "testkit-postgres-io");
        thread.setDaemon(true);
        thread.start();
    };
    private static final long DRAIN_SECONDS = 5;

    private PostgresExec() {
    }

    /** What a finished (or timed-out and killed) command produced. */
    public record Result(int exitCode, String stdout, String stderr, boolean timedOut) {

        /** Exit code 0 within the deadline. */
        public boolean ok() {
            return !timedOut && exitCode == 0;
        }
    }

    /**
     * Runs {@code command} with the inherited environment minus every {@code PG*} variable (so a
     * developer's {@code PGPASSWORD}, {@code PGOPTIONS} or {@code PGSERVICE} cannot leak in) plus
     * {@code env}; feeds it {@code stdin} (may be {@code null}); kills it after {@code timeout}.
     */
    public static Result run(List<String> command, Map<String, String> env, byte[] stdin, Duration timeout) {
        ProcessBuilder builder = new ProcessBuilder(command);
        cleanEnvironment(builder, env);
        Process process;
        try {
            process = builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.get(0), e);
        }
        CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> drain(process.getInputStream()), DAEMON);
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> drain(process.getErrorStream()), DAEMON);
        CompletableFuture.runAsync(() -> feed(process.getOutputStream(), stdin), DAEMON);
        boolean finished;
        try {
            finished = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
            if (!finished) {
                process.destroyForcibly();
                process.waitFor(DRAIN_SECONDS, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        }
        return new Result(finished ? process.exitValue() : -1, collect(out), collect(err), !finished);
    }

    /** Runs {@code command} with its output appended to {@code log}; returns its exit code, or -1 after {@code timeout}. */
    public static int runLogged(List<String> command, Map<String, String> env, Path log, Duration timeout) {
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        cleanEnvironment(builder, env);
        try {
            Process process = builder.start();
            if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                process.waitFor(DRAIN_SECONDS, TimeUnit.SECONDS);
                return -1;
            }
            return process.exitValue();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.get(0), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + command.get(0), e);
        }
    }

    /** Starts a long-running process (the postmaster) with its output appended to {@code log}. */
    public static Process start(List<String> command, Map<String, String> env, Path log) {
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        cleanEnvironment(builder, env);
        try {
            return builder.start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command.get(0), e);
        }
    }

    /** Sends {@code signal} (for example {@code STOP}) to {@code pid}, failing if {@code kill} does. */
    public static void signal(String signal, long pid) {
        Result result = run(List.of("kill", "-" + signal, Long.toString(pid)), Map.of(), null, Duration.ofSeconds(10));
        if (!result.ok()) {
            throw new IllegalStateException("kill -" + signal + " " + pid + " failed: " + result.stderr().trim());
        }
    }

    /** Sends {@code signal} to each pid that still exists; a process that exited meanwhile is not an error. */
    public static void signalQuietly(String signal, Collection<Long> pids) {
        if (pids.isEmpty()) {
            return;
        }
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(pid -> command.add(Long.toString(pid)));
        run(command, Map.of(), null, Duration.ofSeconds(10));
    }

    /** The processes below {@code pid}, children and grandchildren; empty if it is gone. */
    public static List<ProcessHandle> descendants(long pid) {
        return ProcessHandle.of(pid).map(handle -> handle.descendants().toList()).orElse(List.of());
    }

    /**
     * {@code true} if the process has exited. A zombie counts as exited: once its parent (here the
     * postmaster) is gone, only init can reap it, and init in a container may never do so.
     */
    public static boolean isGone(ProcessHandle process) {
        if (!process.isAlive()) {
            return true;
        }
        char state = state(process.pid());
        return state == 'Z' || state == 'X' || state == '?';
    }

    /** The state letter from {@code /proc/PID/stat} ({@code R}, {@code S}, {@code T}, {@code Z}...), or {@code ?} if unknown. */
    public static char state(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.UTF_8);
            int close = stat.lastIndexOf(')');
            return close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
        } catch (IOException | UncheckedIOException e) {
            return '?';
        }
    }

    private static void cleanEnvironment(ProcessBuilder builder, Map<String, String> env) {
        Map<String, String> environment = builder.environment();
        environment.keySet().removeIf(name -> name.startsWith("PG"));
        environment.putAll(env);
    }

    private static String drain(InputStream stream) {
        try (stream) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            stream.transferTo(bytes);
            return bytes.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static void feed(OutputStream stream, byte[] input) {
        try (stream) {
            if (input != null) {
                stream.write(input);
            }
        } catch (IOException e) {
            // The process exited without reading everything; its exit code tells the story.
        }
    }

    private static String collect(CompletableFuture<String> output) {
        try {
            return output.get(DRAIN_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        } catch (ExecutionException | TimeoutException e) {
            return "";
        }
    }
}
