package dev.warden.micrometer;

import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.journal.Compensation;
import dev.warden.quota.ledger.journal.QuarantinedEntry;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * Meters of a ledger consumer: pass it to {@code LedgerConsumer.builder(...).listener(...)}.
 *
 * <table>
 *   <caption>meters</caption>
 *   <tr><td>{@value #ENTRIES} (counter, {@code result})</td><td>journal entries moved into the database:
 *       {@code applied}, {@code redelivered} (already there), {@code quarantined}; its rate is the drain rate</td></tr>
 *   <tr><td>{@value #BATCHES} (timer)</td><td>one batch, from its first statement to its acknowledgement</td></tr>
 *   <tr><td>{@value #BACKLOG} (gauge, {@code state})</td><td>entries not yet in the database, as last reported for
 *       the partitions this consumer owns: {@code pending} (delivered, not acknowledged) and {@code undelivered}</td></tr>
 *   <tr><td>{@value #QUARANTINED} (counter, {@code reason})</td><td>entries the database refused, stored in quarantine</td></tr>
 *   <tr><td>{@value #COMPENSATIONS} (counter, {@code done})</td><td>replays compensated in Redis</td></tr>
 *   <tr><td>{@value #RETRIES} (counter, {@code cause})</td><td>waits after a failure of the {@code database} or {@code redis}</td></tr>
 *   <tr><td>{@value #FENCED} (counter)</td><td>batches the database refused because a newer owner holds the partition</td></tr>
 *   <tr><td>{@value #PARTITIONS} (gauge)</td><td>partitions this consumer owns</td></tr>
 * </table>
 *
 * <p>Thread-safety: called on the consumer's thread; gauges are read on the registry's. The backlog is
 * a concurrent map of partition to its last report.
 */
public final class MicrometerLedgerListener implements LedgerListener {

    public static final String ENTRIES = "warden.ledger.entries";
    public static final String BATCHES = "warden.ledger.batches";
    public static final String BACKLOG = "warden.ledger.backlog";
    public static final String QUARANTINED = "warden.ledger.quarantined";
    public static final String COMPENSATIONS = "warden.ledger.compensations";
    public static final String RETRIES = "warden.ledger.retries";
    public static final String FENCED = "warden.ledger.fenced";
    public static final String PARTITIONS = "warden.ledger.partitions";

    private final MeterRegistry registry;
    private final Tags tags;
    private final ConcurrentMap<Integer, Lag> lag = new ConcurrentHashMap<>();
    private final ConcurrentMap<Integer, Long> owned = new ConcurrentHashMap<>();
    private final Counter applied;
    private final Counter redelivered;
    private final Counter quarantinedEntries;
    private final Timer batches;
    private final Counter fenced;

    public MicrometerLedgerListener(MeterRegistry registry, Iterable<Tag> tags) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
        this.applied = entries("applied");
        this.redelivered = entries("redelivered");
        this.quarantinedEntries = entries("quarantined");
        this.batches = Timer.builder(BATCHES)
                .description("Ledger batches, from the first statement to the acknowledgement")
                .tags(this.tags)
                .register(registry);
        this.fenced = Counter.builder(FENCED)
                .description("Batches refused because a newer owner holds the partition")
                .tags(this.tags)
                .register(registry);
        Gauge.builder(BACKLOG, lag, l -> l.values().stream().mapToLong(Lag::pending).sum())
                .description("Journal entries delivered to the ledger and not yet acknowledged")
                .tags(this.tags).tag("state", "pending")
                .register(registry);
        Gauge.builder(BACKLOG, lag, l -> l.values().stream().mapToLong(Lag::undelivered).sum())
                .description("Journal entries not yet delivered to the ledger")
                .tags(this.tags).tag("state", "undelivered")
                .register(registry);
        Gauge.builder(PARTITIONS, owned, ConcurrentMap::size)
                .description("Journal partitions this consumer owns")
                .tags(this.tags)
                .register(registry);
    }

    @Override
    public void batchCommitted(Batch batch) {
        applied.increment(batch.applied());
        redelivered.increment(batch.redelivered());
        quarantinedEntries.increment(batch.quarantined());
        batches.record(batch.took());
    }

    @Override
    public void quarantined(QuarantinedEntry entry) {
        Counter.builder(QUARANTINED)
                .description("Journal entries the database refused, stored in quarantine")
                .tags(tags)
                .tag("reason", MicrometerLockObserver.tagValue(entry.reason()))
                .register(registry)
                .increment();
    }

    @Override
    public void compensated(Compensation compensation) {
        Counter.builder(COMPENSATIONS)
                .description("Replayed request ids compensated in Redis")
                .tags(tags)
                .tag("done", Boolean.toString(compensation.done()))
                .register(registry)
                .increment();
    }

    @Override
    public void lag(int partition, long pending, long undelivered) {
        lag.put(partition, new Lag(pending, undelivered));
    }

    @Override
    public void databaseUnavailable(Throwable cause, Duration retryIn) {
        retry("database");
    }

    @Override
    public void redisUnavailable(Throwable cause, Duration retryIn) {
        retry("redis");
    }

    @Override
    public void partitionTaken(int partition, long token) {
        owned.put(partition, token);
    }

    @Override
    public void partitionLost(int partition) {
        owned.remove(partition);
        // Its new owner reports its backlog from now on.
        lag.remove(partition);
    }

    @Override
    public void fenced(int partition, long token) {
        fenced.increment();
    }

    private Counter entries(String result) {
        return Counter.builder(ENTRIES)
                .description("Journal entries moved into the ledger database, by result")
                .tags(tags)
                .tag("result", result)
                .register(registry);
    }

    private void retry(String cause) {
        Counter.builder(RETRIES)
                .description("Ledger waits after a failure, by what failed")
                .tags(tags)
                .tag("cause", cause)
                .register(registry)
                .increment();
    }

    private record Lag(long pending, long undelivered) {
    }
}
