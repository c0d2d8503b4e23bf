package dev.warden.quota.ledger.internal.consume;

import dev.warden.lock.Lease;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
import dev.warden.quota.ledger.internal.store.PartitionFence;
import dev.warden.quota.ledger.internal.store.Schema;
import dev.warden.quota.ledger.journal.QuarantinedEntry;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.KeyLayout;
import io.lettuce.core.StreamMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the consumer loop does with the entries it read: writes each partition's batch fenced (a
 * round's batches in one transaction when they can be), retrying while the database is down; then
 * reports quarantines, compensates replays, acknowledges, trims and counts. Which partitions are owned
 * is the loop's ({@link ConsumerLoop}); this only checks, before each write, that the lease holds.
 *
 * <p>Confined to the loop's thread, like the {@code fences} it reads and {@code dialect}.
 */
public final class BatchProcessor {

    private static final Logger log = LoggerFactory.getLogger(Logs.CONSUMER);

    /** The loop's answer to a partition the database fenced this consumer out of. */
    public interface OnFencedOut {
        void partition(int partition, String why);
    }

    private final ConsumerSettings settings;
    private final KeyLayout layout;
    private final DataSource dataSource;
    private final LedgerListener listener;
    private final JournalStreams streams;
    private final PartitionOwnership ownership;
    private final ConsumerCounters counters;
    private final Map<Integer, PartitionFence> fences;
    private final Compensations compensations;
    private final LoopPacing pacing;
    private final OnFencedOut onFencedOut;
    private Dialect dialect;

    BatchProcessor(ConsumerLoop.Parts parts, Map<Integer, PartitionFence> fences, LoopPacing pacing,
                   OnFencedOut onFencedOut) {
        this.settings = parts.settings();
        this.layout = parts.layout();
        this.dataSource = parts.dataSource();
        this.listener = parts.listener();
        this.streams = parts.streams();
        this.ownership = parts.ownership();
        this.counters = parts.counters();
        this.fences = fences;
        this.pacing = pacing;
        this.onFencedOut = onFencedOut;
        this.compensations = new Compensations(dataSource, parts.quota(), listener);
    }

    /** The database's dialect, learnt (and the schema verified) on the first connection. */
    Dialect dialect(Connection c) throws SQLException {
        if (dialect == null) {
            dialect = Dialect.of(c);
            Schema.verify(dataSource);
        }
        return dialect;
    }

    /** One partition's entries as read: new ones, or a page a sweep claimed. */
    public record Read(int partition, String stream, List<StreamMessage<String, String>> messages) {

        List<String> ids() {
            return messages.stream().map(StreamMessage::getId).toList();
        }

        List<BatchWriter.Raw> raws() {
            List<BatchWriter.Raw> raws = new ArrayList<>(messages.size());
            for (StreamMessage<String, String> m : messages) {
                if (m.getBody() != null) {
                    raws.add(new BatchWriter.Raw(m.getId(), m.getBody()));
                }
            }
            return raws;
        }
    }
    /**
     * A round's batches, one per partition: written in one transaction when they can be (one commit and one
     * set of statements for all), else each on its own, which also finds the partition that was fenced or
     * the entry the database refused. Then compensations, and the acknowledgements, pipelined.
     */
    void processRound(List<Read> reads) {
        if (reads.size() == 1) {
            process(reads.get(0), false);
            return;
        }
        long started = System.nanoTime();
        BatchWriter.Together together = writeTogetherWithRetry(reads);
        if (together == null || together.steps().isEmpty()) {
            Set<String> fenced = together == null ? Set.of() : together.fenced();
            for (Read r : reads) {
                if (fenced.contains(r.stream())) {
                    onFencedOut.partition(r.partition(), "its token is below the one the ledger records");
                } else {
                    process(r, false);
                }
            }
            return;
        }
        Map<Integer, List<BatchStep>> byPartition = new HashMap<>();
        for (BatchStep s : together.steps().get()) {
            byPartition.computeIfAbsent(s.part.partition(), k -> new ArrayList<>()).add(s);
        }
        Map<String, List<String>> acks = new LinkedHashMap<>();
        for (Read r : reads) {
            applyOutcomes(r, byPartition.getOrDefault(r.partition(), List.of()));
            acks.put(r.stream(), r.ids());
        }
        Map<String, JournalStreams.Trim> trims = streams.ackAndTrimAll(acks);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        for (Read r : reads) {
            counted(r, byPartition.getOrDefault(r.partition(), List.of()), trims.get(r.stream()), false, took);
        }
    }

    /** One partition's batch: write (fenced, retrying while the database is down), compensate, acknowledge and trim. */
    void process(Read read, boolean claimed) {
        long started = System.nanoTime();
        List<BatchWriter.Raw> raws = read.raws();
        List<BatchStep> steps = List.of();
        if (!raws.isEmpty()) {
            steps = writeWithRetry(read.partition(), read.stream(), raws, !claimed);
            if (steps == null) {
                return; // fenced or lost: not ours to acknowledge; the new owner takes the entries over
            }
        }
        applyOutcomes(read, steps);
        JournalStreams.Trim trim = streams.ackAndTrim(read.stream(), read.ids());
        counted(read, steps, trim, claimed, Duration.ofNanos(System.nanoTime() - started));
    }

    /** What a committed batch asks for beyond the database: quarantine reports, compensations in Redis. */
    private void applyOutcomes(Read read, List<BatchStep> steps) {
        for (BatchStep s : steps) {
            if (s.action == BatchStep.Action.QUARANTINE) {
                QuarantinedEntry q = s.quarantined();
                log.error("ledger: quarantined journal entry {} of {} ({}): {}; fields {}", s.raw.id(), read.stream(),
                        s.reason, s.detail, s.raw.fields());
                LoopPacing.notify(() -> listener.quarantined(q));
            } else if (s.action == BatchStep.Action.COMPENSATE || s.action == BatchStep.Action.COMPENSATE_AGAIN) {
                compensations.compensate(read.stream(), s);
            }
        }
    }

    private void counted(Read read, List<BatchStep> steps, JournalStreams.Trim trim, boolean claimed, Duration took) {
        int nApplied = 0;
        int nRedelivered = 0;
        int nQuarantined = 0;
        int nCompensated = 0;
        for (BatchStep s : steps) {
            switch (s.action) {
                case APPLY -> nApplied++;
                case REDELIVERED, ALREADY_QUARANTINED -> nRedelivered++;
                case QUARANTINE -> nQuarantined++;
                case COMPENSATE -> {
                    nApplied++;
                    nCompensated++;
                }
                case COMPENSATE_AGAIN -> nCompensated++;
            }
        }
        counters.trimmed.addAndGet(trim.removed());
        counters.batches.incrementAndGet();
        counters.applied.addAndGet(nApplied);
        counters.redelivered.addAndGet(nRedelivered);
        counters.quarantined.addAndGet(nQuarantined);
        counters.compensated.addAndGet(nCompensated);
        LedgerListener.Batch batch = new LedgerListener.Batch(read.partition(), read.messages().size(), nApplied,
                nRedelivered, nQuarantined, nCompensated, claimed, took);
        LoopPacing.notify(() -> listener.batchCommitted(batch));
    }

    /**
     * What writing the round together did; null when a lease ended before (the batches then go one by one,
     * which leaves that partition's alone).
     */
    private BatchWriter.Together writeTogetherWithRetry(List<Read> reads) {
        return withRetry(() -> "a round of " + reads.size() + " partitions", () -> {
            List<BatchWriter.Part> parts = new ArrayList<>();
            for (Read r : reads) {
                PartitionFence fence = fences.get(r.partition());
                Lease lease = ownership.lease(r.partition());
                if (fence == null || lease == null || !lease.isValid()) {
                    return null;
                }
                parts.add(new BatchWriter.Part(r.partition(), r.stream(), fence, r.raws(), true));
            }
            try (Connection c = dataSource.getConnection()) {
                return new BatchWriter(dialect(c), layout).writeTogether(c, parts, settings.lockTimeout());
            }
        });
    }

    /**
     * The batch's steps once committed; null when the partition is no longer this consumer's.
     *
     * @param fresh whether the entries were read new (never delivered before), rather than claimed
     */
    private List<BatchStep> writeWithRetry(int partition, String stream, List<BatchWriter.Raw> raws, boolean fresh) {
        return withRetry(() -> "a batch of " + raws.size() + " entries", () -> {
            PartitionFence fence = fences.get(partition);
            Lease lease = ownership.lease(partition);
            if (fence == null || lease == null || !lease.isValid()) {
                return null;
            }
            try (Connection c = dataSource.getConnection()) {
                return new BatchWriter(dialect(c), layout).write(c, new BatchWriter.Part(partition, stream, fence, raws, fresh),
                        settings.lockTimeout());
            } catch (PartitionFence.FencedOut e) {
                onFencedOut.partition(partition, e.getMessage());
                return null;
            }
        });
    }

    /** A write to the database; null when the partitions it writes are no longer this consumer's. */
    private interface Write<T> {
        T attempt() throws SQLException;
    }

    /**
     * {@code write} until it returns, waiting with backoff after each database failure (counted and told
     * to the listener); throws {@link LoopPacing.Stopped} once the consumer is stopping.
     */
    private <T> T withRetry(java.util.function.Supplier<String> what, Write<T> write) {
        Duration backoff = settings.initialBackoff();
        while (true) {
            if (!pacing.running()) {
                throw new LoopPacing.Stopped();
            }
            try {
                return write.attempt();
            } catch (SQLException | RuntimeException e) {
                if (e instanceof LoopPacing.Stopped stopped) {
                    throw stopped;
                }
                counters.databaseRetries.incrementAndGet();
                Duration wait = backoff;
                log.warn("ledger: writing {} failed ({}); retrying in {} ms", what.get(), e.toString(), wait.toMillis());
                LoopPacing.notify(() -> listener.databaseUnavailable(e, wait));
                pacing.pause(wait);
                backoff = pacing.next(backoff);
            }
        }
    }
}
