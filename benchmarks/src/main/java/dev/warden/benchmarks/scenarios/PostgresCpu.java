package dev.warden.benchmarks.scenarios;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * The CPU time of the PostgreSQL server launched by testkit under this JVM (the postmaster, its background
 * processes and one backend per connection), from a workload's set-up to its check: what each acquisition
 * cost the database, warm-up included. Only processes whose command line is PostgreSQL's count (not, say,
 * a child JVM whose class path names the driver's jar); a connection closed in between loses its time, so
 * the workloads keep their pools open until the check.
 */
final class PostgresCpu {

    private Duration from;

    /** Starts counting (call after the clients' pools are open). */
    void start() {
        from = used();
    }

    /** "PostgreSQL CPU x µs/op (whole run)" for {@code operations} since {@link #start}; empty when not started or none. */
    String perOperation(long operations) {
        if (from == null || operations <= 0) {
            return "";
        }
        double micros = used().minus(from).toNanos() / 1e3 / operations;
        return String.format(Locale.ROOT, "PostgreSQL CPU %.1f µs/op (warm-up included)", micros);
    }

    static Duration used() {
        return ProcessHandle.current().descendants()
                .filter(p -> isPostgres(commandLine(p)))
                .map(p -> p.info().totalCpuDuration().orElse(Duration.ZERO))
                .reduce(Duration.ZERO, Duration::plus);
    }

    /** The postmaster ({@code .../bin/postgres -D ...}) and its children, which retitle themselves {@code postgres: ...}. */
    private static boolean isPostgres(String commandLine) {
        String first = commandLine.split("[\0 ]", 2)[0];
        return first.endsWith("/postgres") || first.equals("postgres") || commandLine.startsWith("postgres:");
    }

    private static String commandLine(ProcessHandle p) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(p.pid()), "cmdline"), StandardCharsets.UTF_8);
        } catch (IOException | UncheckedIOException gone) {
            return "";
        }
    }
}
