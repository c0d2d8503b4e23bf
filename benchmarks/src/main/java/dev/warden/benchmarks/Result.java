package dev.warden.benchmarks;

import dev.warden.benchmarks.internal.JsonLine;

import java.util.Locale;
import java.util.Map;

/**
 * The figures of one workload at one thread count.
 *
 * @param latencyP50Micros and the other percentiles: per-operation latency in microseconds
 * @param clientCpuMicros CPU time the benchmark's own JVM (load generator and client under test)
 *        spent per operation, in microseconds (NaN when not measured)
 * @param serverCpuMicros CPU time the server the operation runs on (Redis, etcd or ZooKeeper) spent
 *        per operation, in microseconds (NaN when not measured); files written before etcd and
 *        ZooKeeper were measured call it {@code redisCpuUsPerOp}
 */
public record Result(String scenario, String implementation, int threads, long operations, double seconds,
                     double throughput, double latencyP50Micros, double latencyP99Micros, double latencyP999Micros,
                     double latencyMaxMicros, long errors, double clientCpuMicros, double serverCpuMicros,
                     String note) {

    /** One JSON object on one line. */
    public String toJson() {
        return String.format(Locale.ROOT,
                "{\"scenario\":%s,\"implementation\":%s,\"threads\":%d,\"operations\":%d,\"seconds\":%.3f,"
                        + "\"opsPerSecond\":%.1f,\"p50us\":%s,\"p99us\":%s,\"p999us\":%s,\"maxUs\":%s,"
                        + "\"errors\":%d,\"clientCpuUsPerOp\":%s,\"serverCpuUsPerOp\":%s,\"note\":%s}",
                quote(scenario), quote(implementation), threads, operations, seconds, throughput,
                number(latencyP50Micros, 1), number(latencyP99Micros, 1), number(latencyP999Micros, 1),
                number(latencyMaxMicros, 1), errors, number(clientCpuMicros, 2), number(serverCpuMicros, 2), quote(note));
    }

    /**
     * The result on one line written by {@link #toJson()}; {@code null} (or {@code NaN}, as older files
     * have it) where a figure was not measured.
     *
     * @throws IllegalArgumentException when the line is not a result (e.g. the sustained ledger's rows)
     */
    public static Result fromJson(String line) {
        Map<String, Object> f = JsonLine.parse(line);
        if (!(f.get("scenario") instanceof String) || !(f.get("implementation") instanceof String)) {
            throw new IllegalArgumentException("not a result (no scenario and implementation): " + line);
        }
        return new Result((String) f.get("scenario"), (String) f.get("implementation"), (int) figure(f, "threads"),
                (long) figure(f, "operations"), figure(f, "seconds"), figure(f, "opsPerSecond"), figure(f, "p50us"),
                figure(f, "p99us"), figure(f, "p999us"), figure(f, "maxUs"), (long) figure(f, "errors"),
                figure(f, "clientCpuUsPerOp"), f.containsKey("serverCpuUsPerOp") ? figure(f, "serverCpuUsPerOp") : figure(f, "redisCpuUsPerOp"),
                (String) f.get("note"));
    }

    private static double figure(Map<String, Object> fields, String name) {
        return fields.get(name) instanceof Double d ? d : Double.NaN;
    }

    /** NaN as null: JSON has no NaN, and a reader that follows the standard would refuse the line. */
    private static String number(double value, int decimals) {
        return Double.isNaN(value) ? "null" : String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    private static String quote(String s) {
        if (s == null) {
            return "null";
        }
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
