package dev.warden.examples.demo;

import dev.warden.quota.Outcome;
import dev.warden.quota.ledger.LedgerConsumer;
import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one run of the billing demo did and whether the money stayed right.
 *
 * @param lock            {@code none}, {@code redis}, {@code etcd} or {@code zookeeper}
 * @param elapsed         how long the channels charged
 * @param channels        per channel: charges, applied, latency
 * @param outcomes        outcomes of the charges, by status
 * @param usedUp          insufficient because the plan was used up when the charge was priced
 * @param stalePrices     insufficient although the balance read covered the price: it changed in between
 * @param errors          failures that were not outcomes, by reason
 * @param retries         charges retried with the same request id
 * @param hot             the hot merchant's figures, in one line
 * @param ledgerEntries   this run's journal entries in the ledger (openings and deductions)
 * @param backlog         journal entries not yet in the ledger when the report was made
 * @param consumer        the journal consumer's counters
 * @param reconciliation  the reconciliation's result, in one line
 * @param invariants      each invariant checked, passed or not
 */
public record Report(String lock, Duration elapsed, List<Load.ChannelResult> channels, Map<Outcome.Status, Long> outcomes,
                     long usedUp, long stalePrices, Map<String, Long> errors, long retries, String hot, long ledgerEntries, long backlog,
                     LedgerConsumer.Stats consumer, String reconciliation, List<Invariant> invariants) {

    /** One invariant: its statement, whether it held, and the figures behind it. */
    public record Invariant(String name, boolean passed, String detail) {
    }

    public Report {
        channels = List.copyOf(channels);
        outcomes = Map.copyOf(outcomes);
        errors = Map.copyOf(errors);
        invariants = List.copyOf(invariants);
    }

    /** Whether every invariant held. */
    public boolean passed() {
        return invariants.stream().allMatch(Invariant::passed);
    }

    /** All charges, any outcome or failure. */
    public long charges() {
        return channels.stream().mapToLong(Load.ChannelResult::charges).sum();
    }

    void print(PrintStream out) {
        out.println();
        out.printf("%-22s %10s %10s %10s %10s %10s%n", "Charges by channel", "charges", "applied", "p50", "p99", "max");
        Histogram all = new Histogram(channels.get(0).latencyMicros().getHighestTrackableValue(), 3);
        long charges = 0;
        long applied = 0;
        for (Load.ChannelResult c : channels) {
            Histogram h = c.latencyMicros();
            out.printf("  %-20s %,10d %,10d %10s %10s %10s%n", c.channel().label(), c.charges(), c.applied(),
                    ms(h.getValueAtPercentile(50)), ms(h.getValueAtPercentile(99)), ms(h.getMaxValue()));
            all.add(h);
            charges += c.charges();
            applied += c.applied();
        }
        double seconds = Math.max(0.001, elapsed.toMillis() / 1000.0);
        out.printf("  %-20s %,10d %,10d %10s %10s %10s   %,.0f charges/s%n", "all", charges, applied,
                ms(all.getValueAtPercentile(50)), ms(all.getValueAtPercentile(99)), ms(all.getMaxValue()), charges / seconds);

        out.println();
        out.println("Outcomes");
        for (Map.Entry<Outcome.Status, Long> e : new TreeMap<>(outcomes).entrySet()) {
            if (e.getValue() == 0 && e.getKey() != Outcome.Status.APPLIED && e.getKey() != Outcome.Status.INSUFFICIENT) {
                continue;
            }
            out.printf("  %-20s %,10d%s%n", e.getKey().name().toLowerCase(Locale.ROOT), e.getValue(),
                    e.getKey() == Outcome.Status.INSUFFICIENT ? String.format(Locale.ROOT,
                            "   %,d plan used up, %,d priced on a stale balance", usedUp, stalePrices) : "");
        }
        if (errors.isEmpty()) {
            out.printf("  %-20s %10s%n", "errors", "none");
        } else {
            errors.forEach((k, v) -> out.printf("  %-20s %,10d%n", "error " + k.toLowerCase(Locale.ROOT), v));
        }
        if (retries > 0) {
            out.printf("  %-20s %,10d   same request id, so applied at most once%n", "retried", retries);
        }
        out.printf("  %-20s %s%n", "hot merchant", hot);

        out.println();
        out.println("Ledger");
        out.printf("  %-20s %,d entries of this run in the ledger; backlog %d%n", "journal drained", ledgerEntries, backlog);
        out.printf("  %-20s %,d entries applied in %,d batches; %d redelivered, %d quarantined, %d compensated%n",
                "consumer", consumer.applied(), consumer.batches(), consumer.redelivered(), consumer.quarantined(),
                consumer.compensated());
        out.printf("  %-20s %s%n", "reconciliation", reconciliation);

        out.println();
        out.println("Invariants");
        for (Invariant i : invariants) {
            out.printf("  %s  %s%n", i.passed() ? "PASS" : "FAIL", i.name());
            if (!i.detail().isEmpty()) {
                out.printf("        %s%n", i.detail());
            }
        }
        out.println();
        if (!passed()) {
            out.println("An invariant FAILED: the figures above say where Redis and the ledger disagree.");
        } else if (lock.equals("none") && stalePrices > 0) {
            out.printf("Every invariant held, without a lock: %,d charge%s priced on a balance another channel changed"
                    + " before the%ndeduction, and the Lua balance check refused %s. The lock is an optimisation; the"
                    + " database decides.%n", stalePrices, stalePrices == 1 ? " was" : "s were", stalePrices == 1 ? "it" : "them");
        } else if (lock.equals("none")) {
            out.printf("Every invariant held, without a lock. No charge happened to be priced on a stale balance this time"
                    + "%n(the race needs a plan's last units: try --hot-share 0.9 --initial-quota 500); the Lua balance"
                    + " check would refuse it.%n");
        } else {
            out.printf("Every invariant held. Under the %s lock no charge was priced on a stale balance (%d), the"
                    + " fencing token%ntravelled with each deduction, and the ledger and reconciliation have the last"
                    + " word.%n", lock, stalePrices);
        }
    }

    private static String ms(long micros) {
        if (micros >= 100_000) {
            return String.format(Locale.ROOT, "%,d ms", micros / 1000);
        }
        return String.format(Locale.ROOT, "%.2f ms", micros / 1000.0);
    }
}
