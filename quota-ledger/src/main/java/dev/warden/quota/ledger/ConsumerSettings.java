package dev.warden.quota.ledger;

import java.time.Duration;
import java.util.List;

/**
 * The settings a consumer runs with: the builder's, checked, as one immutable value.
 *
 * @param candidates       the partitions it may own, in order
 * @param chosenPartitions whether they were chosen ({@link LedgerConsumer.Builder#partitions}) rather than all
 * @param lockTimeout      how long a statement may wait for a row lock (the quota request timeout)
 */
record ConsumerSettings(String group, String consumerName, List<Integer> candidates, boolean chosenPartitions,
                        int batchSize, Duration blockTime, Duration sweepInterval, Duration rebalanceInterval,
                        Duration initialBackoff, Duration maxBackoff, Duration lagInterval, Duration lockTimeout) {

    ConsumerSettings {
        candidates = List.copyOf(candidates);
    }
}
