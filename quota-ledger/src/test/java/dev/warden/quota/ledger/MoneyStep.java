package dev.warden.quota.ledger;

import dev.warden.quota.ledger.internal.reconcile.Bootstrap;

import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;
import java.util.stream.Collectors;

/**
 * One step of a generated program over the money path: a public call, a fault, or a recovery tool.
 * Each prints as the Java that builds it, so a shrunk failure prints as a runnable program
 * ({@link MoneyPathRegressionTest} keeps the ones that found defects).
 */
sealed interface MoneyStep {

    /** How a deduction is sent. */
    enum Via { SYNC, ASYNC, BATCH }

    /** What a charge's pricing step answers, given the balance (or what a hold holds). */
    enum Price {
        TEN(b -> 10), HALF(b -> b / 2), ALL(b -> b), MORE(b -> b + 1);

        final LongUnaryOperator function;

        Price(LongUnaryOperator function) {
            this.function = function;
        }
    }

    String java();

    record Open(String account, long amount) implements MoneyStep {
        public String java() {
            return "new Open(" + q(account) + ", " + amount + ")";
        }
    }

    /** A top-up ({@code refund=false}) or a refund. */
    record Credit(String account, long amount, String requestId, boolean refund) implements MoneyStep {
        public String java() {
            return "new Credit(" + q(account) + ", " + amount + ", " + q(requestId) + ", " + refund + ")";
        }
    }

    /** A deduction; {@code token} 0 for none, else a lease of the account's lock carrying it (a holder that believes it is valid). */
    record Deduct(String account, long amount, String requestId, Via via, long token) implements MoneyStep {
        public String java() {
            return "new Deduct(" + q(account) + ", " + amount + ", " + q(requestId) + ", Via." + via + ", " + token + ")";
        }
    }

    /** {@code deductAll} over distinct accounts. */
    record DeductAll(List<Deduct> deductions) implements MoneyStep {
        public String java() {
            return "new DeductAll(List.of(" + deductions.stream().map(Deduct::java).collect(Collectors.joining(", ")) + "))";
        }
    }

    record Charge(String account, String requestId, Price price) implements MoneyStep {
        public String java() {
            return "new Charge(" + q(account) + ", " + q(requestId) + ", Price." + price + ")";
        }
    }

    record Hold(String account, long amount, String holdId, long expiryMs) implements MoneyStep {
        public String java() {
            return "new Hold(" + q(account) + ", " + amount + ", " + q(holdId) + ", " + expiryMs + ")";
        }
    }

    record Capture(String account, String holdId, long amount) implements MoneyStep {
        public String java() {
            return "new Capture(" + q(account) + ", " + q(holdId) + ", " + amount + ")";
        }
    }

    record Release(String account, String holdId) implements MoneyStep {
        public String java() {
            return "new Release(" + q(account) + ", " + q(holdId) + ")";
        }
    }

    record ChargeHold(String account, String holdId, Price price) implements MoneyStep {
        public String java() {
            return "new ChargeHold(" + q(account) + ", " + q(holdId) + ", Price." + price + ")";
        }
    }

    /**
     * A retry: the change {@code back} changes ago (counting only calls that change money: credits, deductions,
     * charges, holds and their ends, postings) sent again as it was, the way a client retries after a timeout;
     * with {@code unfenced}, a fenced deduction is retried without its lease (as {@code charge} does under
     * {@code lock-unavailable=proceed}).
     */
    record Again(int back, boolean unfenced) implements MoneyStep {
        public String java() {
            return "new Again(" + back + ", " + unfenced + ")";
        }
    }

    /** The engine's clock moves on, then {@code expireHolds()} runs (when {@code sweep}). */
    record Advance(long millis, boolean sweep) implements MoneyStep {
        public String java() {
            return "new Advance(" + millis + ", " + sweep + ")";
        }
    }

    record OpenBalance(String account, String balance) implements MoneyStep {
        public String java() {
            return "new OpenBalance(" + q(account) + ", " + q(balance) + ")";
        }
    }

    record Post(String account, String requestId, SortedMap<String, Long> deltas) implements MoneyStep {
        Post(String account, String requestId, Map<String, Long> deltas) {
            this(account, requestId, new TreeMap<>(deltas));
        }

        public String java() {
            return "new Post(" + q(account) + ", " + q(requestId) + ", Map.of(" + deltas.entrySet().stream()
                    .map(e -> q(e.getKey()) + ", " + e.getValue() + "L").collect(Collectors.joining(", ")) + "))";
        }
    }

    record Split(String account, int buckets) implements MoneyStep {
        public String java() {
            return "new Split(" + q(account) + ", " + buckets + ")";
        }
    }

    record Merge(String account) implements MoneyStep {
        public String java() {
            return "new Merge(" + q(account) + ")";
        }
    }

    /** {@code balance()}: on a split account it also completes the moves in flight. */
    record Balance(String account) implements MoneyStep {
        public String java() {
            return "new Balance(" + q(account) + ")";
        }
    }

    /**
     * A move between two buckets of a split account cut by a dying process: taken from bucket {@code from}
     * (up to {@code amount}; {@code from} counts round the account's other buckets) and, when {@code given},
     * given to bucket 0, never finished.
     */
    record CutMove(String account, int from, long amount, boolean given) implements MoneyStep {
        public String java() {
            return "new CutMove(" + q(account) + ", " + from + ", " + amount + ", " + given + ")";
        }
    }

    /** Consumers run on these partitions until they have drained them, then stop. */
    record Drain(List<Integer> partitions) implements MoneyStep {
        public String java() {
            return "new Drain(List.of(" + partitions.stream().map(String::valueOf).collect(Collectors.joining(", ")) + "))";
        }
    }

    /** A consumer reads a partition's new entries, then dies (or freezes) before it commits them. */
    record GhostRead(int partition) implements MoneyStep {
        public String java() {
            return "new GhostRead(" + partition + ")";
        }
    }

    /**
     * That consumer resumes: it commits what it read under the token it held then (refused when a newer
     * owner drained the partition meanwhile) and dies before compensating or acknowledging.
     */
    record GhostCommit(int partition) implements MoneyStep {
        public String java() {
            return "new GhostCommit(" + partition + ")";
        }
    }

    /** The idempotency retention passes: every record with a lifetime expires. */
    record RetentionPasses() implements MoneyStep {
        public String java() {
            return "new RetentionPasses()";
        }
    }

    /** Redis restarts empty. */
    record DataLoss() implements MoneyStep {
        public String java() {
            return "new DataLoss()";
        }
    }

    record Bootstrap() implements MoneyStep {
        public String java() {
            return "new Bootstrap()";
        }
    }

    /** A reconciliation; with {@code repair}, {@code repair(true)}. */
    record Reconcile(boolean repair) implements MoneyStep {
        public String java() {
            return "new Reconcile(" + repair + ")";
        }
    }

    private static String q(String s) {
        return '"' + s + '"';
    }

    /** A program as the Java that runs it. */
    static String program(List<MoneyStep> steps) {
        return steps.stream().map(s -> "        " + s.java()).collect(Collectors.joining(",\n", "check(\n", ");"));
    }
}
