package dev.warden.quota.ledger;

import dev.warden.lock.Lease;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.internal.JournalStreams;
import dev.warden.quota.spi.KeyLayout;
import io.lettuce.core.StreamMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.LinkedHashMap;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One consumer's loop, on its own thread: rebalance (register, drop lost partitions, shed, take),
 * sweep owned partitions for entries pending on others, read new entries, write each partition's batch
 * fenced, compensate replays, acknowledge and trim. The policy lives here; the stream protocol is
 * {@link JournalStreams}', the SQL {@link LedgerSql}'s, undoing a replay {@link Compensations}', the
 * lifecycle {@link LedgerConsumer}'s.
 *
 * <p>Confined to its thread: the loop connection ({@code streams}), the ownership, {@code fences} and
 * {@code dialect}. {@code running} and {@code ownedSnapshot} are volatile (read by other threads);
 * the counters are atomic.
 */
final class ConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(LedgerConsumer.class);

    /** The parts the loop works with, handed over as one value. */
    record Parts(ConsumerSettings settings, KeyLayout layout, DataSource dataSource, LedgerListener listener,
                 JournalStreams streams, QuotaService quota, PartitionOwnership ownership, ConsumerRegistry registry,
                 ConsumerCounters counters) {
    }

    private final ConsumerSettings settings;
    private final KeyLayout layout;
    private final DataSource dataSource;
    private final LedgerListener listener;
    private final JournalStreams streams;
    private final PartitionOwnership ownership;
    private final ConsumerRegistry registry;
    private final ConsumerCounters counters;
    private final Map<String, Integer> partitionOf = new HashMap<>();
    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private final Map<Integer, PartitionFence> fences = new HashMap<>();
    private final Compensations compensations;
    private volatile boolean running = true;
    private volatile Set<Integer> ownedSnapshot = Set.of();
    private Ledger.Dialect dialect;
    /** Set when entries may be pending ahead of new ones: the next round sweeps before it reads. */
    private boolean sweepDue;

    ConsumerLoop(Parts parts) {
        this.settings = parts.settings();
        this.layout = parts.layout();
        this.dataSource = parts.dataSource();
        this.listener = parts.listener();
        this.streams = parts.streams();
        this.ownership = parts.ownership();
        this.registry = parts.registry();
        this.counters = parts.counters();
        this.compensations = new Compensations(dataSource, parts.quota(), listener);
        for (int p : settings.candidates()) {
            partitionOf.put(layout.journal(p), p);
        }
    }

    boolean running() {
        return running;
    }

    /** The partitions owned now, published by the loop. */
    Set<Integer> owned() {
        return ownedSnapshot;
    }

    /** Asks the loop to stop: a batch being written finishes or is abandoned unacknowledged. */
    void requestStop() {
        running = false;
        stopSignal.countDown();
    }

    @Override
    public void run() {
        Duration backoff = settings.initialBackoff();
        long nextRebalance = System.nanoTime();
        sweepDue = true;
        long nextSweep = System.nanoTime();
        long nextLag = System.nanoTime();
        try {
            while (running) {
                try {
                    long now = System.nanoTime();
                    if (now - nextRebalance >= 0) {
                        rebalance();
                        nextRebalance = System.nanoTime() + settings.rebalanceInterval().toNanos();
                    }
                    if (fences.isEmpty()) {
                        pause(settings.rebalanceInterval().dividedBy(4));
                        continue;
                    }
                    if (sweepDue || System.nanoTime() - nextSweep >= 0) {
                        sweepDue = false;
                        for (int p : List.copyOf(fences.keySet())) {
                            sweep(p);
                        }
                        nextSweep = System.nanoTime() + settings.sweepInterval().toNanos();
                    }
                    readNew();
                    if (System.nanoTime() - nextLag >= 0) {
                        reportLag();
                        nextLag = System.nanoTime() + settings.lagInterval().toNanos();
                    }
                    backoff = settings.initialBackoff();
                } catch (Stopped e) {
                    break;
                } catch (RuntimeException e) {
                    if (!running) {
                        break;
                    }
                    // Whatever this round had read and not acknowledged stays pending: apply it before anything newer.
                    sweepDue = true;
                    if (JournalStreams.isNoGroup(e)) {
                        log.warn("the ledger's consumer group is gone (Redis lost its data?): creating it again");
                        for (int p : fences.keySet()) {
                            streams.ensureGroup(layout.journal(p));
                        }
                        continue;
                    }
                    counters.redisRetries.incrementAndGet();
                    Duration wait = backoff;
                    log.warn("ledger consumer: Redis failed ({}); trying again in {} ms", e.toString(), wait.toMillis());
                    notify(() -> listener.redisUnavailable(e, wait));
                    if (!sleep(wait)) {
                        break;
                    }
                    backoff = next(backoff);
                }
            }
        } finally {
            running = false;
            fences.clear();
            if (ownership != null) {
                ownership.releaseAll();
            }
            ownedSnapshot = Set.of();
            registry.leave();
            log.info("ledger consumer {} stopped", settings.consumerName());
        }
    }

    /** Drops lost partitions, registers, sheds partitions beyond the fair share and takes free ones. */
    private void rebalance() {
        for (int p : ownership.dropLost()) {
            fences.remove(p);
            log.warn("ledger consumer {} lost partition {} (its lease ended); another consumer takes it over",
                    settings.consumerName(), p);
            notify(() -> listener.partitionLost(p));
        }
        List<String> live = registry.heartbeat();
        int rank = Math.max(0, live.indexOf(settings.consumerName()));
        int share = ownership.share(live.size());
        for (int p : ownership.shed(share)) {
            fences.remove(p);
            log.info("ledger consumer {} released partition {} ({} consumers share {} partitions)", settings.consumerName(),
                    p, live.size(), settings.candidates().size());
        }
        List<Integer> taken = ownership.take(share, rank * settings.candidates().size() / Math.max(1, live.size()));
        log.debug("ledger consumer {}: {} live, share {}, holding {}, took {}", settings.consumerName(), live.size(), share,
                ownership.partitions(), taken);
        // A partition whose start failed half-way (Redis or the database went away) is started again.
        for (int p : List.copyOf(ownership.partitions())) {
            if (!fences.containsKey(p)) {
                onTaken(p);
            }
        }
        ownedSnapshot = Set.copyOf(new TreeSet<>(fences.keySet()));
    }

    /** A partition just taken: its group, its fence in the database, then what others left pending. */
    private void onTaken(int p) {
        Lease lease = ownership.lease(p);
        String stream = layout.journal(p);
        streams.ensureGroup(stream);
        PartitionFence fence = new PartitionFence(stream, lease.fencingToken(), settings.consumerName());
        if (!lease.isValid()) {
            ownership.release(p);
            return;
        }
        // One attempt: a database that fails (or a superseded owner still holding the partition's row in an
        // open transaction) must not stall the other partitions; the next rebalance tries again.
        try (Connection c = dataSource.getConnection()) {
            ensureDialect(c);
            fence.claim(c, dialect, lockTimeout());
        } catch (PartitionFence.FencedOut e) {
            counters.fenced.incrementAndGet();
            log.error("ledger consumer {} cannot take partition {}: {} (did the lock backend lose its data, or"
                    + " change?); leaving it", settings.consumerName(), p, e.getMessage());
            notify(() -> listener.fenced(p, fence.token()));
            ownership.release(p);
            return;
        } catch (SQLException | RuntimeException e) {
            counters.databaseRetries.incrementAndGet();
            log.warn("ledger: recording the owner of partition {} failed ({}); trying again at the next rebalance", p,
                    e.toString());
            notify(() -> listener.databaseUnavailable(e, settings.rebalanceInterval()));
            return;
        }
        fences.put(p, fence);
        log.info("ledger consumer {} took partition {} (token {})", settings.consumerName(), p, fence.token());
        notify(() -> listener.partitionTaken(p, fence.token()));
        sweep(p);
    }

    /** Claims every entry of an owned partition pending on any consumer (dead or superseded), and applies them in order. */
    private void sweep(int p) {
        String stream = layout.journal(p);
        String cursor = "0-0";
        do {
            if (!fences.containsKey(p)) {
                return;
            }
            JournalStreams.Claimed claimed = streams.claim(stream, cursor, Duration.ZERO, settings.batchSize());
            List<StreamMessage<String, String>> messages = claimed.entries();
            if (!messages.isEmpty()) {
                counters.claimed.addAndGet(messages.size());
                process(new Read(p, stream, messages), true);
            }
            cursor = claimed.next();
            if (claimed.done()) {
                break;
            }
        } while (running);
        if (!running || !fences.containsKey(p)) {
            return;
        }
        // What it claimed, it now holds: the others are left with nothing here, and once silent they are forgotten
        // (best effort: a failure here leaves a consumer entry for the next sweep, nothing else).
        try {
            streams.forgetIdleConsumers(stream, settings.rebalanceInterval().multipliedBy(3));
        } catch (RuntimeException e) {
            log.debug("ledger consumer {}: could not forget idle consumers of {}", settings.consumerName(), stream, e);
        }
    }

    /** One partition's entries as read: new ones, or a page a sweep claimed. */
    private record Read(int partition, String stream, List<StreamMessage<String, String>> messages) {

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

    private void readNew() {
        List<String> owned = new ArrayList<>();
        for (int p : fences.keySet()) {
            Lease lease = ownership.lease(p);
            if (lease != null && lease.isValid()) {
                owned.add(layout.journal(p));
            }
        }
        if (owned.isEmpty()) {
            return;
        }
        Map<String, List<StreamMessage<String, String>>> byStream = streams.readNew(owned, settings.batchSize(),
                settings.blockTime());
        List<Read> reads = new ArrayList<>();
        Map<String, String> firstIds = new HashMap<>();
        for (Map.Entry<String, List<StreamMessage<String, String>>> e : byStream.entrySet()) {
            Integer p = partitionOf.get(e.getKey());
            if (p != null && !e.getValue().isEmpty()) {
                reads.add(new Read(p, e.getKey(), e.getValue()));
                firstIds.put(e.getKey(), e.getValue().get(0).getId());
            }
        }
        if (reads.isEmpty()) {
            return;
        }
        // A partition's entries are applied in journal order: an opening before the account's changes, a top-up
        // before the deduction it made possible. New entries wait while older ones are pending anywhere (a round
        // cut short by a failure, a superseded consumer's reads); the sweep applies those first, in order.
        Set<String> behind = streams.pendingBeforeAll(firstIds);
        if (!behind.isEmpty()) {
            log.debug("ledger consumer {}: older entries of {} are pending; sweeping them first", settings.consumerName(),
                    behind);
            sweepDue = true;
            reads.removeIf(r -> behind.contains(r.stream()));
        }
        processRound(reads);
    }

    /**
     * A round's batches, one per partition: written in one transaction when they can be (one commit and one
     * set of statements for all), else each on its own, which also finds the partition that was fenced or
     * the entry the database refused. Then compensations, and the acknowledgements, pipelined.
     */
    private void processRound(List<Read> reads) {
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
                    fencedOut(r.partition(), "its token is below the one the ledger records");
                } else {
                    process(r, false);
                }
            }
            return;
        }
        Map<Integer, List<BatchWriter.Step>> byPartition = new HashMap<>();
        for (BatchWriter.Step s : together.steps().get()) {
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
    private void process(Read read, boolean claimed) {
        long started = System.nanoTime();
        List<BatchWriter.Raw> raws = read.raws();
        List<BatchWriter.Step> steps = List.of();
        if (!raws.isEmpty()) {
            steps = writeWithRetry(read.partition(), read.stream(), raws);
            if (steps == null) {
                return; // fenced or lost: not ours to acknowledge; the new owner takes the entries over
            }
        }
        applyOutcomes(read, steps);
        JournalStreams.Trim trim = streams.ackAndTrim(read.stream(), read.ids());
        counted(read, steps, trim, claimed, Duration.ofNanos(System.nanoTime() - started));
    }

    /** What a committed batch asks for beyond the database: quarantine reports, compensations in Redis. */
    private void applyOutcomes(Read read, List<BatchWriter.Step> steps) {
        for (BatchWriter.Step s : steps) {
            if (s.action == BatchWriter.Action.QUARANTINE) {
                QuarantinedEntry q = s.quarantined();
                log.error("ledger: quarantined journal entry {} of {} ({}): {}; fields {}", s.raw.id(), read.stream(),
                        s.reason, s.detail, s.raw.fields());
                notify(() -> listener.quarantined(q));
            } else if (s.action == BatchWriter.Action.COMPENSATE || s.action == BatchWriter.Action.COMPENSATE_AGAIN) {
                compensations.compensate(read.stream(), s);
            }
        }
    }

    private void counted(Read read, List<BatchWriter.Step> steps, JournalStreams.Trim trim, boolean claimed, Duration took) {
        int nApplied = 0;
        int nRedelivered = 0;
        int nQuarantined = 0;
        int nCompensated = 0;
        for (BatchWriter.Step s : steps) {
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
        notify(() -> listener.batchCommitted(batch));
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
                parts.add(new BatchWriter.Part(r.partition(), r.stream(), fence, r.raws()));
            }
            try (Connection c = dataSource.getConnection()) {
                ensureDialect(c);
                return new BatchWriter(dialect, layout).writeTogether(c, parts, lockTimeout());
            }
        });
    }

    /** The batch's steps once committed; null when the partition is no longer this consumer's. */
    private List<BatchWriter.Step> writeWithRetry(int partition, String stream, List<BatchWriter.Raw> raws) {
        return withRetry(() -> "a batch of " + raws.size() + " entries", () -> {
            PartitionFence fence = fences.get(partition);
            Lease lease = ownership.lease(partition);
            if (fence == null || lease == null || !lease.isValid()) {
                return null;
            }
            try (Connection c = dataSource.getConnection()) {
                ensureDialect(c);
                return new BatchWriter(dialect, layout).write(c, new BatchWriter.Part(partition, stream, fence, raws), lockTimeout());
            } catch (PartitionFence.FencedOut e) {
                fencedOut(partition, e.getMessage());
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
     * to the listener); throws {@link Stopped} once the consumer is stopping.
     */
    private <T> T withRetry(java.util.function.Supplier<String> what, Write<T> write) {
        Duration backoff = settings.initialBackoff();
        while (true) {
            if (!running) {
                throw new Stopped();
            }
            try {
                return write.attempt();
            } catch (SQLException | RuntimeException e) {
                if (e instanceof Stopped) {
                    throw (Stopped) e;
                }
                counters.databaseRetries.incrementAndGet();
                Duration wait = backoff;
                log.warn("ledger: writing {} failed ({}); retrying in {} ms", what.get(), e.toString(), wait.toMillis());
                notify(() -> listener.databaseUnavailable(e, wait));
                pause(wait);
                backoff = next(backoff);
            }
        }
    }

    /** The database refused this consumer's batch of a partition: a newer owner holds it. */
    private void fencedOut(int partition, String why) {
        PartitionFence fence = fences.remove(partition);
        counters.fenced.incrementAndGet();
        log.warn("ledger consumer {}: the database refused a batch of partition {}: {}; it is another consumer's now",
                settings.consumerName(), partition, why);
        if (fence != null) {
            notify(() -> listener.fenced(partition, fence.token()));
        }
        ownership.release(partition);
        ownedSnapshot = Set.copyOf(new TreeSet<>(fences.keySet()));
    }

    /**
     * How long a statement may wait for a row lock: a superseded owner frozen inside a transaction holds
     * its partition's row, and the new owner must not wait for it forever.
     */
    private Duration lockTimeout() {
        return settings.lockTimeout();
    }

    private void ensureDialect(Connection c) throws SQLException {
        if (dialect == null) {
            dialect = Ledger.Dialect.of(c);
            Ledger.verifySchema(dataSource);
        }
    }

    private void reportLag() {
        for (int p : fences.keySet()) {
            JournalStreams.Backlog b = streams.backlog(layout.journal(p));
            notify(() -> listener.lag(p, b.pending(), b.undelivered()));
        }
    }

    private Duration next(Duration backoff) {
        Duration doubled = backoff.multipliedBy(2);
        return doubled.compareTo(settings.maxBackoff()) > 0 ? settings.maxBackoff() : doubled;
    }

    private void pause(Duration d) {
        if (!sleep(d)) {
            throw new Stopped();
        }
    }

    /** Waits {@code d}; false when stopped (or interrupted) meanwhile. */
    private boolean sleep(Duration d) {
        try {
            return !stopSignal.await(d.toNanos(), TimeUnit.NANOSECONDS) && running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private void notify(Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException e) {
            log.warn("a ledger listener failed", e);
        }
    }

    /** Unwinds the loop when the consumer is stopped. */
    private static final class Stopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stopped() {
            super(null, null, false, false);
        }
    }

}
