package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * The rows that compete: one scenario at one thread count, e.g. "lock, contended (one name)" at 16
 * threads, Warden's implementations beside the libraries users would pick instead.
 *
 * @param rows in the order they were measured (Warden's first, as {@link Rows} lists them)
 */
public record ScenarioGroup(String scenario, int threads, List<Result> rows) {

    /** The groups of {@code results} in order of first appearance. */
    public static List<ScenarioGroup> of(List<Result> results) {
        Map<String, List<Result>> byKey = new LinkedHashMap<>();
        for (Result r : results) {
            byKey.computeIfAbsent(r.scenario() + "\n" + r.threads(), k -> new ArrayList<>()).add(r);
        }
        List<ScenarioGroup> groups = new ArrayList<>();
        for (List<Result> rows : byKey.values()) {
            groups.add(new ScenarioGroup(rows.get(0).scenario(), rows.get(0).threads(), List.copyOf(rows)));
        }
        return groups;
    }

    /** E.g. {@code lock, contended (one name), 16 threads}. */
    public String label() {
        return scenario + ", " + threadsLabel();
    }

    /** E.g. {@code 1 thread} or {@code 16 threads}. */
    public String threadsLabel() {
        return threads + (threads == 1 ? " thread" : " threads");
    }

    /**
     * Whether the threads wait for each other: they share one name (a lock's, a semaphore's, a read-write
     * lock's), and there are two or more of them (one thread alone meets no one).
     */
    public boolean contended() {
        return scenario.contains("one name") && threads > 1;
    }

    /** The highest throughput among the rows of {@code role}; empty when the group has none (or none moved). */
    public Optional<Result> best(Role role) {
        return rows.stream().filter(r -> Role.of(r.implementation()) == role && r.throughput() > 0)
                .max((a, b) -> Double.compare(a.throughput(), b.throughput()));
    }

    /** Warden's best throughput over the best peer's; empty without both. Limit rows are no peer. */
    public OptionalDouble wardenOverBestPeer() {
        Optional<Result> warden = best(Role.WARDEN);
        Optional<Result> peer = best(Role.PEER);
        return warden.isPresent() && peer.isPresent()
                ? OptionalDouble.of(warden.get().throughput() / peer.get().throughput()) : OptionalDouble.empty();
    }

    /** E.g. {@code 1.97× best peer}; empty without both Warden and a peer. */
    public Optional<String> ratioText() {
        OptionalDouble ratio = wardenOverBestPeer();
        if (ratio.isEmpty()) {
            return Optional.empty();
        }
        double x = ratio.getAsDouble();
        // Two decimals are already more than a run on a shared machine can tell apart; above 10 none are.
        return Optional.of(String.format(Locale.ROOT, x < 10 ? "%.2f× best peer" : "%.0f× best peer", x));
    }
}
