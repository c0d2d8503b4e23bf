package dev.warden.spring.internal;

import dev.warden.quota.ledger.LedgerConsumer;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The application's ledger consumer: down when its thread is not running or Redis cannot report the
 * backlog; up otherwise, with the backlog (journal entries not yet in the database), the partitions it
 * owns and its counters. A growing backlog is for alerting on the {@code warden.ledger.backlog} gauge.
 */
public final class LedgerHealthIndicator extends AbstractHealthIndicator {

    private final LedgerConsumer consumer;

    public LedgerHealthIndicator(LedgerConsumer consumer) {
        super("the ledger's backlog could not be read");
        this.consumer = consumer;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        builder.withDetail("consumer", consumer.consumerName())
                .withDetail("group", consumer.group());
        if (!consumer.isRunning()) {
            builder.down().withDetail("problem", "the consumer is not running");
            return;
        }
        LedgerConsumer.Stats stats = consumer.stats();
        builder.up()
                .withDetail("backlog", consumer.backlog())
                .withDetail("partitions", consumer.partitions())
                .withDetail("applied", stats.applied())
                .withDetail("quarantined", stats.quarantined());
    }
}
