package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.redis.QuotaConfig;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * The settings a consumer runs with: the builder's, checked, as one immutable value.
 *
 * @param candidates       the partitions it may own, in order
 * @param chosenPartitions whether they were chosen ({@link dev.warden.quota.ledger.LedgerConsumer.Builder#partitions}) rather than all
 * @param lockTimeout      how long a statement may wait for a row lock (the quota request timeout)
 */
public record ConsumerSettings(String group, String consumerName, List<Integer> candidates, boolean chosenPartitions,
                        int batchSize, Duration blockTime, Duration sweepInterval, Duration rebalanceInterval,
                        Duration initialBackoff, Duration maxBackoff, Duration lagInterval, Duration lockTimeout) {

    public ConsumerSettings {
        candidates = List.copyOf(candidates);
    }

    /**
     * The builder's values, checked together with the quota settings they run on ({@code config}, or
     * the problem that made it null).
     *
     * @param partitions the chosen partitions, or null for all
     * @throws QuotaException {@link Reason#CONFIGURATION} listing every problem
     */
    public static ConsumerSettings checked(String configProblem, QuotaConfig config, String group, String consumerName,
                                    Collection<Integer> partitions, int batchSize, Duration blockTime,
                                    Duration sweepInterval, Duration rebalanceInterval, Duration initialBackoff,
                                    Duration maxBackoff, Duration lagInterval) {
        List<String> problems = new ArrayList<>();
        if (configProblem != null) {
            problems.add(configProblem);
        }
        name(problems, "group", group);
        name(problems, "consumerName", consumerName);
        if (batchSize < 1 || batchSize > 10_000) {
            problems.add("batchSize must be 1..10000, was " + batchSize);
        }
        positive(problems, "blockTime", blockTime);
        positive(problems, "sweepInterval", sweepInterval);
        positive(problems, "rebalanceInterval", rebalanceInterval);
        positive(problems, "retryBackoff initial", initialBackoff);
        positive(problems, "retryBackoff max", maxBackoff);
        positive(problems, "lagInterval", lagInterval);
        if (initialBackoff != null && maxBackoff != null && initialBackoff.compareTo(maxBackoff) > 0) {
            problems.add("retryBackoff initial " + initialBackoff + " exceeds max " + maxBackoff);
        }
        if (config != null && blockTime != null && blockTime.compareTo(config.requestTimeout()) >= 0) {
            problems.add("blockTime " + blockTime + " must be shorter than warden.quota.request-timeout "
                    + config.requestTimeout());
        }
        if (config != null && partitions != null) {
            if (partitions.isEmpty()) {
                problems.add("partitions must not be empty");
            }
            for (Integer p : partitions) {
                if (p == null || p < 0 || p >= config.partitions()) {
                    problems.add("partition " + p + " is not in 0.." + (config.partitions() - 1));
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new QuotaException(Reason.CONFIGURATION, "invalid ledger consumer configuration: "
                    + String.join("; ", problems));
        }
        List<Integer> chosen = new ArrayList<>();
        if (partitions == null) {
            for (int p = 0; p < config.partitions(); p++) {
                chosen.add(p);
            }
        } else {
            chosen.addAll(new TreeSet<>(partitions));
        }
        return new ConsumerSettings(group, consumerName, chosen, partitions != null, batchSize, blockTime, sweepInterval,
                rebalanceInterval, initialBackoff, maxBackoff, lagInterval, config.requestTimeout());
    }

    /** {@code <host>-<pid>}. */
    public static String defaultConsumerName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            host = "host";
        }
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
    }

    private static void positive(List<String> problems, String name, Duration d) {
        if (d == null || d.isNegative() || d.isZero()) {
            problems.add(name + " must be positive, was " + d);
        }
    }

    /** Group and consumer names become parts of keys and lock names: printable, without ':', braces or controls. */
    private static void name(List<String> problems, String what, String value) {
        if (value == null || value.isBlank()) {
            problems.add(what + " must not be blank");
            return;
        }
        if (value.length() > 100 || value.chars().anyMatch(ch -> Character.isISOControl(ch) || ch == '{' || ch == '}'
                || ch == ':' || Character.isWhitespace(ch))) {
            problems.add(what + " '" + value + "' must be 1..100 characters without spaces, controls, ':' or braces");
        }
    }
}
