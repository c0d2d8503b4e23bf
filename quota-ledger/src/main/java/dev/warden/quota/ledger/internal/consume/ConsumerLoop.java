package dev.warden.quota.ledger.internal.consume;

import dev.warden.lock.Lease;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
import dev.warden.quota.ledger.internal.store.LedgerSql;
import dev.warden.quota.ledger.internal.store.PartitionFence;
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
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * One consumer's loop, on its own thread: rebalance (register, drop lost partitions, shed, take),
 * sweep owned partitions for entries pending on others, read new entries and hand them to the
 * {@link BatchProcessor}, which writes them fenced, compensates, acknowledges and trims. The ownership
 * policy lives here; the stream protocol is {@link JournalStreams}', the SQL {@link LedgerSql}'s,
 * waiting and stopping {@link LoopPacing}'s, the lifecycle {@link dev.warden.quota.ledger.LedgerConsumer}'s.
 *
 * <p>Confined to its thread: the loop connection ({@code streams}), the ownership and {@code fences}.
 * {@code ownedSnapshot} is volatile (read by other threads); the counters are atomic.
 */
public final class ConsumerLoop implements Runnable {

    private static final Logger log = LoggerFactory.getLogger(Logs.CONSUMER);

    /** The parts the loop works with, handed over as one value. */
    public record Parts(ConsumerSettings settings, KeyLayout layout, DataSource dataSource, LedgerListener listener,
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
    private final Map<Integer, PartitionFence> fences = new HashMap<>();
    private final LoopPacing pacing;
    private final BatchProcessor batches;
    private volatile Set<Integer> ownedSnapshot = Set.of();
    /** Set when entries may be pending ahead of new ones: the next round sweeps before it reads. */
    private boolean sweepDue;

    public ConsumerLoop(Parts parts) {
        this.settings = parts.settings();
        this.layout = parts.layout();
        this.dataSource = parts.dataSource();
        this.listener = parts.listener();
        this.streams = parts.streams();
        this.ownership = parts.ownership();
        this.registry = parts.registry();
        this.counters = parts.counters();
        this.pacing = new LoopPacing(settings.maxBackoff());
        this.batches = new BatchProcessor(parts, fences, pacing, this::fencedOut);
        for (int p : settings.candidates()) {
            partitionOf.put(layout.journal(p), p);
        }
    }

    public boolean running() {
        return pacing.running();
    }

    /** The partitions owned now, published by the loop. */
    public Set<Integer> owned() {
        return ownedSnapshot;
    }

    /** Asks the loop to stop: a batch being written finishes or is abandoned unacknowledged. */
    public void requestStop() {
        pacing.requestStop();
    }

    @Override
    public void run() {
        Duration backoff = settings.initialBackoff();
        long nextRebalance = System.nanoTime();
        sweepDue = true;
        long nextSweep = System.nanoTime();
        long nextLag = System.nanoTime();
        try {
            while (pacing.running()) {
                try {
                    long now = System.nanoTime();
                    if (now - nextRebalance >= 0) {
                        rebalance();
                        nextRebalance = System.nanoTime() + settings.rebalanceInterval().toNanos();
                    }
                    if (fences.isEmpty()) {
                        pacing.pause(settings.rebalanceInterval().dividedBy(4));
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
                } catch (LoopPacing.Stopped e) {
                    break;
                } catch (RuntimeException e) {
                    if (!pacing.running()) {
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
                    LoopPacing.notify(() -> listener.redisUnavailable(e, wait));
                    if (!pacing.sleep(wait)) {
                        break;
                    }
                    backoff = pacing.next(backoff);
                }
            }
        } finally {
            pacing.requestStop();
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
            LoopPacing.notify(() -> listener.partitionLost(p));
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
            fence.claim(c, batches.dialect(c), settings.lockTimeout());
        } catch (PartitionFence.FencedOut e) {
            counters.fenced.incrementAndGet();
            log.error("ledger consumer {} cannot take partition {}: {} (did the lock backend lose its data, or"
                    + " change?); leaving it", settings.consumerName(), p, e.getMessage());
            LoopPacing.notify(() -> listener.fenced(p, fence.token()));
            ownership.release(p);
            return;
        } catch (SQLException | RuntimeException e) {
            counters.databaseRetries.incrementAndGet();
            log.warn("ledger: recording the owner of partition {} failed ({}); trying again at the next rebalance", p,
                    e.toString());
            LoopPacing.notify(() -> listener.databaseUnavailable(e, settings.rebalanceInterval()));
            return;
        }
        fences.put(p, fence);
        log.info("ledger consumer {} took partition {} (token {})", settings.consumerName(), p, fence.token());
        LoopPacing.notify(() -> listener.partitionTaken(p, fence.token()));
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
                batches.process(new BatchProcessor.Read(p, stream, messages), true);
            }
            cursor = claimed.next();
            if (claimed.done()) {
                break;
            }
        } while (pacing.running());
        if (!pacing.running() || !fences.containsKey(p)) {
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
        List<BatchProcessor.Read> reads = new ArrayList<>();
        Map<String, String> firstIds = new HashMap<>();
        for (Map.Entry<String, List<StreamMessage<String, String>>> e : byStream.entrySet()) {
            Integer p = partitionOf.get(e.getKey());
            if (p != null && !e.getValue().isEmpty()) {
                reads.add(new BatchProcessor.Read(p, e.getKey(), e.getValue()));
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
        batches.processRound(reads);
    }

    /** The database refused this consumer's batch of a partition: a newer owner holds it. */
    private void fencedOut(int partition, String why) {
        PartitionFence fence = fences.remove(partition);
        counters.fenced.incrementAndGet();
        log.warn("ledger consumer {}: the database refused a batch of partition {}: {}; it is another consumer's now",
                settings.consumerName(), partition, why);
        if (fence != null) {
            LoopPacing.notify(() -> listener.fenced(partition, fence.token()));
        }
        ownership.release(partition);
        ownedSnapshot = Set.copyOf(new TreeSet<>(fences.keySet()));
    }

    private void reportLag() {
        List<Integer> owned = List.copyOf(fences.keySet());
        Map<String, JournalStreams.Backlog> backlogs = streams.backlogs(owned.stream().map(layout::journal).toList());
        for (int p : owned) {
            JournalStreams.Backlog b = backlogs.get(layout.journal(p));
            LoopPacing.notify(() -> listener.lag(p, b.pending(), b.undelivered()));
        }
    }
}
