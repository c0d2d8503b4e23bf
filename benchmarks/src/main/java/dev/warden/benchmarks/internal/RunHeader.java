package dev.warden.benchmarks.internal;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * When and where a run was measured: the first line of {@code results.jsonl}, so a picture redrawn
 * from a kept file still says which machine its numbers belong to (they only compare within one run).
 *
 * @param date when the run started, e.g. {@code 2026-11-29T18:00Z}
 * @param machine the cores, memory, OS and JVM, e.g. {@code 2 CPUs (Intel Xeon), 24 GiB, Debian 12, Java 17}
 */
public record RunHeader(String date, String machine) {

    private static final DateTimeFormatter MINUTES = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm'Z'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    /** This machine, a run started at {@code start}. */
    public static RunHeader of(Instant start) {
        return new RunHeader(MINUTES.format(start.truncatedTo(ChronoUnit.MINUTES)), describeThisMachine());
    }

    /** The header among a line's fields: a line with a {@code machine} or {@code date} and no scenario. */
    public static Optional<RunHeader> from(Map<String, Object> fields) {
        if (fields.containsKey("scenario") || !(fields.get("machine") instanceof String || fields.get("date") instanceof String)) {
            return Optional.empty();
        }
        return Optional.of(new RunHeader(text(fields.get("date")), text(fields.get("machine"))));
    }

    /** One JSON object on one line. */
    public String toJson() {
        return "{\"date\":\"" + escape(date) + "\",\"machine\":\"" + escape(machine) + "\"}";
    }

    private static String describeThisMachine() {
        List<String> parts = new ArrayList<>();
        String cpus = Runtime.getRuntime().availableProcessors() + " CPUs";
        parts.add(cpuModel().map(model -> cpus + " (" + model + ")").orElse(cpus));
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            parts.add(Math.round(os.getTotalMemorySize() / (1024.0 * 1024 * 1024)) + " GiB");
        }
        parts.add(osRelease().orElse(System.getProperty("os.name") + " " + System.getProperty("os.version")));
        parts.add(System.getProperty("java.vm.name", "Java").replace(" 64-Bit Server VM", "") + " " + Runtime.version());
        return String.join(", ", parts);
    }

    /** Linux's name for the processor; empty elsewhere. */
    private static Optional<String> cpuModel() {
        return firstValue(Path.of("/proc/cpuinfo"), "model name", ':').map(m -> m.replaceAll("\\s+", " "));
    }

    /** The distribution's name, e.g. {@code Debian GNU/Linux 12 (bookworm)}; empty where there is none. */
    private static Optional<String> osRelease() {
        return firstValue(Path.of("/etc/os-release"), "PRETTY_NAME", '=').map(v -> v.replace("\"", ""));
    }

    private static Optional<String> firstValue(Path file, String key, char separator) {
        try {
            return Files.readAllLines(file).stream()
                    .filter(l -> l.startsWith(key) && l.indexOf(separator) > 0)
                    .map(l -> l.substring(l.indexOf(separator) + 1).trim())
                    .filter(v -> !v.isEmpty())
                    .findFirst();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    private static String text(Object value) {
        return value instanceof String s ? s : "";
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
