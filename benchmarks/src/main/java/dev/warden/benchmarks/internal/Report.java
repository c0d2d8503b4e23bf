package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Writes results three ways: JSON lines, a markdown table, and an SVG bar chart of throughput. */
public final class Report {

    private Report() {
    }

    public static void writeJsonLines(List<Result> results, Path file) throws IOException {
        StringBuilder b = new StringBuilder();
        for (Result r : results) {
            b.append(r.toJson()).append('\n');
        }
        Files.writeString(file, b, StandardCharsets.UTF_8);
    }

    /** Rows grouped by scenario and threads; the ratio column compares each row with the group's first row. */
    public static String markdown(List<Result> results) {
        StringBuilder b = new StringBuilder();
        b.append("| scenario | threads | implementation | ops/s | vs first | p50 µs | p99 µs | p99.9 µs | errors | client CPU µs/op | Redis CPU µs/op | note |\n");
        b.append("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (List<Result> group : groups(results).values()) {
            double base = group.get(0).throughput();
            for (Result r : group) {
                b.append(String.format(Locale.ROOT, "| %s | %d | %s | %,.0f | %s | %s | %s | %s | %d | %s | %s | %s |%n",
                        r.scenario(), r.threads(), r.implementation(), r.throughput(),
                        base > 0 ? String.format(Locale.ROOT, "%.2f×", r.throughput() / base) : "–",
                        micros(r.latencyP50Micros()), micros(r.latencyP99Micros()), micros(r.latencyP999Micros()), r.errors(),
                        tenths(r.clientCpuMicros()), tenths(r.redisCpuMicros()), r.note() == null ? "" : r.note()));
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

    /** Horizontal bars of ops/s, one block per scenario and thread count, log-scaled so every bar is visible. */
    public static String svg(List<Result> results, String title) {
        Map<String, List<Result>> groups = groups(results);
        List<String> implementations = new ArrayList<>();
        for (Result r : results) {
            if (!implementations.contains(r.implementation())) {
                implementations.add(r.implementation());
            }
        }
        String[] palette = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                "#bcbd22", "#17becf"};
        int barHeight = 14;
        int labelWidth = 260;
        int chartWidth = 560;
        int y = 50;
        double max = results.stream().mapToDouble(Result::throughput).max().orElse(1);
        double logMax = Math.log10(Math.max(10, max));
        StringBuilder body = new StringBuilder();
        for (Map.Entry<String, List<Result>> g : groups.entrySet()) {
            body.append(text(8, y + 11, g.getKey(), "bold"));
            y += 16;
            for (Result r : g.getValue()) {
                double w = r.throughput() <= 1 ? 1 : chartWidth * Math.log10(r.throughput()) / logMax;
                String colour = palette[implementations.indexOf(r.implementation()) % palette.length];
                body.append(text(16, y + 11, r.implementation(), "normal"));
                body.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>%n",
                        labelWidth, y, w, barHeight, colour));
                body.append(text((int) (labelWidth + w + 6), y + 11,
                        String.format(Locale.ROOT, "%,.0f ops/s", r.throughput())
                                + (Double.isNaN(r.latencyP99Micros()) ? "" : ", p99 " + micros(r.latencyP99Micros()) + " µs"),
                        "normal"));
                y += barHeight + 4;
            }
            y += 8;
        }
        int height = y + 20;
        int width = labelWidth + chartWidth + 220;
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + width + "\" height=\"" + height
                + "\" font-family=\"sans-serif\" font-size=\"11\">\n"
                + "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                + text(8, 20, title, "bold")
                + text(8, 36, "throughput, log scale; longer is faster", "normal")
                + body + "</svg>\n";
    }

    private static Map<String, List<Result>> groups(List<Result> results) {
        Map<String, List<Result>> groups = new LinkedHashMap<>();
        for (Result r : results) {
            groups.computeIfAbsent(r.scenario() + ", " + r.threads() + " threads", k -> new ArrayList<>()).add(r);
        }
        return groups;
    }

    private static String text(int x, int y, String s, String weight) {
        String escaped = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
        return "<text x=\"" + x + "\" y=\"" + y + "\" font-weight=\"" + weight + "\">" + escaped + "</text>\n";
    }
}
