package dev.warden.spring.probe;

import dev.warden.quota.ledger.LedgerConsumer;

/**
 * The application's ledger consumer: down when its thread is not running; up otherwise, with the backlog
 * (journal entries not yet in the database), the partitions it owns and its counters. Reading the backlog
 * throws when Redis cannot report it. A growing backlog is for alerting on the {@code warden.ledger.backlog}
 * gauge.
 */
public final class LedgerProbe {

    /** What an indicator reports when the probe throws. */
    public static final String FAILURE = "the ledger's backlog could not be read";

    private LedgerProbe() {
    }

    /** Probes {@code consumer} and writes the result to {@code report}. */
    public static void check(LedgerConsumer consumer, HealthReport report) {
        report.detail("consumer", consumer.consumerName())
                .detail("group", consumer.group());
        if (!consumer.isRunning()) {
            report.down().detail("problem", "the consumer is not running");
            return;
        }
        LedgerConsumer.Stats stats = consumer.stats();
        report.up()
                .detail("backlog", consumer.backlog())
                .detail("partitions", consumer.partitions())
                .detail("applied", stats.applied())
                .detail("quarantined", stats.quarantined());
    }
}
