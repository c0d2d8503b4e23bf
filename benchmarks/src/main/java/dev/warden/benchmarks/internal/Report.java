package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes results as JSON lines (what the pictures are drawn from, see {@link dev.warden.benchmarks.Pictures}) and as a
 * markdown table.
 */
public final class Report {

    private Report() {
    }

    /** The header first, then a line per result. */
    public static void writeJsonLines(RunHeader header, List<Result> results, Path file) throws IOException {
        StringBuilder b = new StringBuilder(header.toJson()).append('\n');
        for (Result r : results) {
            b.append(r.toJson()).append('\n');
        }
        Files.writeString(file, b, StandardCharsets.UTF_8);
    }

    /** Rows grouped by scenario and threads; the ratio column compares each row with the group's first row. */
    public static String markdown(List<Result> results) {
        StringBuilder b = new StringBuilder();
        b.append("| scenario | threads | implementation | ops/s | vs first | p50 µs | p99 µs | p99.9 µs | errors | client CPU µs/op | server CPU µs/op | note |\n");
        b.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (ScenarioGroup group : ScenarioGroup.of(results)) {
            double base = group.rows().get(0).throughput();
            for (Result r : group.rows()) {
                b.append(String.format(Locale.ROOT, "| %s | %d | %s | %,.0f | %s | %s | %s | %s | %d | %s | %s | %s |%n",
                        r.scenario(), r.threads(), r.implementation(), r.throughput(),
                        base > 0 ? String.format(Locale.ROOT, "%.2f×", r.throughput() / base) : "–",
                        micros(r.latencyP50Micros()), micros(r.latencyP99Micros()), micros(r.latencyP999Micros()), r.errors(),
                        tenths(r.clientCpuMicros()), tenths(r.serverCpuMicros()), r.note() == null ? "" : r.note()));
            }
        }
        return b.toString();
    }

    private static String tenths(double value) {
        return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%.1f", value);
    }

    private static String micros(double value) {
        return Double.isNaN(value) ? "–" : String.format(Locale.ROOT, "%,.0f", value);
    }
}
