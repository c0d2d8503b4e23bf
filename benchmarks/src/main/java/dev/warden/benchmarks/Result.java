package dev.warden.benchmarks;

import java.util.Locale;

/**
 * The figures of one workload at one thread count.
 *
 * @param latencyP50Micros and the other percentiles: per-operation latency in microseconds
 * @param clientCpuMicros CPU time the benchmark's own JVM (load generator and client under test)
 *        spent per operation, in microseconds (NaN when not measured)
 * @param redisCpuMicros CPU time the Redis server spent per operation, in microseconds (NaN when
 *        the operation does not run on Redis)
 */
public record Result(String scenario, String implementation, int threads, long operations, double seconds,
                     double throughput, double latencyP50Micros, double latencyP99Micros, double latencyP999Micros,
                     double latencyMaxMicros, long errors, double clientCpuMicros, double redisCpuMicros,
                     String note) {

    /** One JSON object on one line. */
    public String toJson() {
        return String.format(Locale.ROOT,
                "{\"scenario\":%s,\"implementation\":%s,\"threads\":%d,\"operations\":%d,\"seconds\":%.3f,"
                        + "\"opsPerSecond\":%.1f,\"p50us\":%.1f,\"p99us\":%.1f,\"p999us\":%.1f,\"maxUs\":%.1f,"
                        + "\"errors\":%d,\"clientCpuUsPerOp\":%s,\"redisCpuUsPerOp\":%s,\"note\":%s}",
                quote(scenario), quote(implementation), threads, operations, seconds, throughput, latencyP50Micros,
                latencyP99Micros, latencyP999Micros, latencyMaxMicros, errors,
                number(clientCpuMicros), number(redisCpuMicros), quote(note));
    }

    private static String number(double value) {
        return Double.isNaN(value) ? "null" : String.format(Locale.ROOT, "%.2f", value);
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
