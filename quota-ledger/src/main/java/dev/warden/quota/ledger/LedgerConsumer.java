package dev.warden.quota.ledger;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.internal.JournalStreams;
import dev.warden.quota.ledger.internal.LedgerScripts;
import dev.warden.quota.spi.KeyLayout;
import dev.warden.quota.spi.QuotaConfig;
import dev.warden.quota.spi.RedisConnector;
import io.lettuce.core.RedisException;
import io.lettuce.core.StreamMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The journal consumer: moves every journal entry from Redis into the ledger database, exactly once
 * in effect, and trims what it has moved.
 *
 * <p><b>Partitions are owned.</b> Any number of consumers (threads or processes) may run against one
 * Redis and one database: each partition is drained by one consumer at a time, the one holding the
 * partition's Warden lock ({@code ledger:<namespace:>group:p<N>}). Consumers register in Redis and
 * each holds about {@code ceil(partitions / live consumers)}; when one dies its leases expire and the
 * others take its partitions. The lease's fencing token is recorded in {@code ledger_partitions} when a
 * consumer takes a partition and checked by every batch ({@code UPDATE ... WHERE token <= ?} in the
 * batch's own transaction), so a consumer that was paused past its lease and superseded has its batch
 * refused by the database itself, and its entries are taken over by the new owner.
 *
 * <p><b>One batch</b> (at most {@link Builder#batchSize} entries of one partition, read with
 * {@code XREADGROUP}) is one database transaction: the fence, the entries (keyed by (account, request
 * id), so a redelivery is a no-op), the balances ({@code CHECK (balance >= 0)}); it commits; then one
 * script acknowledges the entries and trims the stream below the oldest entry the group has not
 * acknowledged, so Redis holds only what is not yet in the database (plus, after a crash between the
 * commit and the acknowledgement, that one batch). When a consumer takes a partition, and every
 * {@link Builder#sweepInterval} after, it claims the partition's entries left pending on other
 * consumers (dead, or superseded) and applies them in journal order.
 *
 * <p>An entry the database refuses (a constraint fails, the account is unknown, the entry is
 * malformed) is stored in {@code ledger_quarantine}, logged, counted and reported to the listener,
 * then acknowledged; the rest of its batch is applied. A second entry for an (account, request id)
 * the ledger already holds (a retry that reached Redis after its idempotency record expired) is
 * applied and then compensated in Redis: see {@link Compensation}.
 *
 * <p>When the database fails, the batch is retried with exponential backoff (the entries stay pending
 * in Redis meanwhile, and nothing else is read: that is the backpressure); when it returns the
 * consumer catches up. When Redis fails, the consumer waits and reconnects likewise. When the lock
 * backend fails, the consumer keeps the partitions it holds while their leases last.
 *
 * <p>Thread-safety: the loop runs on one thread of its own and confines the Redis loop connection,
 * the ownership and the fences to it; counters are atomic; {@link #backlog()} uses a connection of its
 * own under {@code this}'s lock.
 */
public final class LedgerConsumer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LedgerConsumer.class);

    /** The default consumer group. */
    public static final String DEFAULT_GROUP = "warden-ledger";

    /**
     * Counters since start.
     *
     * @param fenced batches (or partition claims) the database refused because a newer owner holds the partition
     * @param trimmed journal entries removed from Redis after they reached the database
     */
    public record Stats(long batches, long applied, long redelivered, long quarantined, long compensated,
                        long claimed, long databaseRetries, long redisRetries, long fenced, long trimmed) {
    }

    private final Builder settings;
    private final QuotaConfig config;
    private final KeyLayout layout;
    private final DataSource dataSource;
    private final LedgerListener listener;
    private final List<Integer> candidates;
    private final Map<String, Integer> partitionOf = new HashMap<>();
    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private final AtomicReference<Thread> thread = new AtomicReference<>();
    private final AtomicLong batches = new AtomicLong();
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong redelivered = new AtomicLong();
    private final AtomicLong quarantinedCount = new AtomicLong();
    private final AtomicLong compensatedCount = new AtomicLong();
    private final AtomicLong claimedCount = new AtomicLong();
    private final AtomicLong databaseRetries = new AtomicLong();
    private final AtomicLong redisRetries = new AtomicLong();
    private final AtomicLong fencedCount = new AtomicLong();
    private final AtomicLong trimmedCount = new AtomicLong();
    private volatile boolean running;
    private volatile boolean closed;
    /** What the loop owns now, published for {@link #partitions()}. */
    private volatile Set<Integer> ownedSnapshot = Set.of();

    // Set by start(); the loop's parts are confined to the loop thread.
    private RedisConnector connector;
    private JournalStreams streams;
    private JournalStreams queries;
    private LockClient locks;
    private boolean ownLocks;
    private QuotaService quota;
    private PartitionOwnership ownership;
    private final Map<Integer, PartitionFence> fences = new HashMap<>();
    private Ledger.Dialect dialect;

    private LedgerConsumer(Builder b, QuotaConfig config) {
        this.settings = b;
        this.config = config;
        this.layout = config.layout();
        this.dataSource = b.dataSource;
        this.listener = b.listener;
        List<Integer> chosen = new ArrayList<>();
        if (b.partitions == null) {
            for (int p = 0; p < config.partitions(); p++) {
                chosen.add(p);
            }
        } else {
            chosen.addAll(new TreeSet<>(b.partitions));
        }
        this.candidates = List.copyOf(chosen);
        for (int p : candidates) {
            partitionOf.put(layout.journal(p), p);
        }
    }

    /**
     * @param quotaSettings the quota service's settings ({@code warden.quota.*}: endpoint, namespace,
     *                      partitions, timeouts): the consumer connects to the same Redis and compensates
     *                      through a quota service of its own. Its {@code warden.lock.*} settings choose
     *                      the lock that owns partitions; without a backend, Redis on the quota endpoint.
     * @param dataSource    the ledger database (its schema must be current: {@link Ledger#migrate})
     */
    public static Builder builder(Map<String, ?> quotaSettings, DataSource dataSource) {
        return new Builder(quotaSettings, dataSource);
    }

    /**
     * Connects and starts the consumer thread. The database is not needed yet: while it is down the
     * consumer retries.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot be reached, {@link Reason#LOCK_FAILED}
     *         when the lock client cannot be created; {@link Reason#CLOSED} after {@link #close()};
     *         {@link IllegalStateException} when started twice
     */
    public synchronized LedgerConsumer start() {
        if (closed) {
            throw new QuotaException(Reason.CLOSED, "the ledger consumer is closed");
        }
        if (thread.get() != null) {
            throw new IllegalStateException("the ledger consumer is already started");
        }
        connector = RedisConnector.create(config);
        try {
            streams = new JournalStreams(connector.connect(), settings.group, settings.consumerName, config.requestTimeout());
            queries = new JournalStreams(connector.connect(), settings.group, null, config.requestTimeout());
            Map<String, Object> quotaSettings = new HashMap<>(settings.quotaSettings);
            quotaSettings.keySet().removeIf(k -> k.startsWith("warden.lock."));
            quotaSettings.put("warden.quota.lock", "none");
            quota = QuotaService.create(quotaSettings);
            if (settings.locks != null) {
                locks = settings.locks;
            } else {
                locks = createLocks();
                ownLocks = true;
            }
            ownership = new PartitionOwnership(locks, layout, settings.group, candidates);
        } catch (RuntimeException e) {
            closeParts();
            throw e;
        }
        running = true;
        Thread t = new Thread(this::run, "warden-ledger-" + settings.consumerName);
        t.setDaemon(true);
        thread.set(t);
        t.start();
        log.info("ledger consumer {} of group {} started: {} candidate partitions of {}, locks on {}",
                settings.consumerName, settings.group, candidates.size(), connector.endpoint(), locks.backend());
        return this;
    }

    private LockClient createLocks() {
        Map<String, Object> lockSettings = new HashMap<>(config.lockSettings());
        Object backend = lockSettings.putIfAbsent("warden.lock.backend", "redis");
        if ((backend == null || "redis".equals(String.valueOf(backend).trim())) && !lockSettings.containsKey("warden.lock.endpoints")) {
            lockSettings.put("warden.lock.endpoints", config.endpoint());
        }
        try {
            return LockClient.create(lockSettings);
        } catch (LockException e) {
            Reason reason = switch (e.reason()) {
                case CONFIGURATION, NO_PROVIDER, AMBIGUOUS_PROVIDER -> Reason.CONFIGURATION;
                default -> Reason.LOCK_FAILED;
            };
            throw new QuotaException(reason, "cannot create the lock client that owns the ledger's partitions: "
                    + e.getMessage(), e);
        }
    }

    /** Whether the consumer thread is running. */
    public boolean isRunning() {
        Thread t = thread.get();
        return running && t != null && t.isAlive();
    }

    /** The consumer's name in the group. */
    public String consumerName() {
        return settings.consumerName;
    }

    /** The consumer group. */
    public String group() {
        return settings.group;
    }

    /** The partitions this consumer owns now (its leases), in order. */
    public Set<Integer> partitions() {
        return ownedSnapshot;
    }

    /** Counters since start. */
    public Stats stats() {
        return new Stats(batches.get(), applied.get(), redelivered.get(), quarantinedCount.get(), compensatedCount.get(),
                claimedCount.get(), databaseRetries.get(), redisRetries.get(), fencedCount.get(), trimmedCount.get());
    }

    /**
     * Entries of the candidate partitions (every partition this consumer may own) that are not yet
     * in the database, whichever consumer holds them: pending plus not yet delivered. Zero means drained.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot answer
     */
    public synchronized long backlog() {
        if (queries == null) {
            throw new IllegalStateException("the ledger consumer is not started");
        }
        long total = 0;
        try {
            for (int p : candidates) {
                total += queries.backlog(layout.journal(p)).total();
            }
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + connector.endpoint() + " could not report the"
                    + " ledger's backlog: " + e.getMessage(), e);
        }
        return total;
    }

    /**
     * Stops the thread: a batch being written finishes or is abandoned unacknowledged (it is delivered
     * again later), and the partitions are released; waits up to the block time plus a few seconds.
     * Idempotent.
     */
    public void stop() {
        running = false;
        stopSignal.countDown();
        Thread t = thread.get();
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(settings.blockTime.plusSeconds(5).toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (t.isAlive()) {
                log.warn("the ledger consumer thread did not stop in time; its entries stay pending and will be delivered again");
                t.interrupt();
            }
        }
    }

    /** Stops, then releases the partitions and closes the connections, the lock client (if its own) and the compensating quota service. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop();
        closeParts();
    }

    private void closeParts() {
        if (ownLocks && locks != null) {
            try {
                locks.close();
            } catch (RuntimeException e) {
                log.warn("closing the ledger's lock client failed", e);
            }
        }
        if (quota != null) {
            quota.close();
        }
        if (connector != null) {
            connector.close();
        }
    }

    @Override
    public String toString() {
        return "LedgerConsumer[" + settings.group + "/" + settings.consumerName + ", " + candidates.size() + " partitions]";
    }

    // ---- the loop ----

    private void run() {
        Duration backoff = settings.initialBackoff;
        long nextRebalance = System.nanoTime();
        long nextSweep = System.nanoTime();
        long nextLag = System.nanoTime();
        try {
            while (running) {
                try {
                    long now = System.nanoTime();
                    if (now - nextRebalance >= 0) {
                        rebalance();
                        nextRebalance = System.nanoTime() + settings.rebalanceInterval.toNanos();
                    }
                    if (fences.isEmpty()) {
                        pause(settings.rebalanceInterval.dividedBy(4));
                        continue;
                    }
                    if (System.nanoTime() - nextSweep >= 0) {
                        for (int p : List.copyOf(fences.keySet())) {
                            sweep(p);
                        }
                        nextSweep = System.nanoTime() + settings.sweepInterval.toNanos();
                    }
                    readNew();
                    if (System.nanoTime() - nextLag >= 0) {
                        reportLag();
                        nextLag = System.nanoTime() + settings.lagInterval.toNanos();
                    }
                    backoff = settings.initialBackoff;
                } catch (Stopped e) {
                    break;
                } catch (RuntimeException e) {
                    if (!running) {
                        break;
                    }
                    if (JournalStreams.isNoGroup(e)) {
                        log.warn("the ledger's consumer group is gone (Redis lost its data?): creating it again");
                        for (int p : fences.keySet()) {
                            streams.ensureGroup(layout.journal(p));
                        }
                        continue;
                    }
                    redisRetries.incrementAndGet();
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
            leaveRegistry();
            log.info("ledger consumer {} stopped", settings.consumerName);
        }
    }

    /** Drops lost partitions, registers, sheds partitions beyond the fair share and takes free ones. */
    private void rebalance() {
        for (int p : ownership.dropLost()) {
            fences.remove(p);
            log.warn("ledger consumer {} lost partition {} (its lease ended); another consumer takes it over",
                    settings.consumerName, p);
            notify(() -> listener.partitionLost(p));
        }
        List<String> live = heartbeat();
        int rank = Math.max(0, live.indexOf(settings.consumerName));
        int share = ownership.share(live.size());
        for (int p : ownership.shed(share)) {
            fences.remove(p);
            log.info("ledger consumer {} released partition {} ({} consumers share {} partitions)", settings.consumerName,
                    p, live.size(), candidates.size());
        }
        List<Integer> taken = ownership.take(share, rank * candidates.size() / Math.max(1, live.size()));
        log.debug("ledger consumer {}: {} live, share {}, holding {}, took {}", settings.consumerName, live.size(), share,
                ownership.partitions(), taken);
        // A partition whose start failed half-way (Redis or the database went away) is started again.
        for (int p : List.copyOf(ownership.partitions())) {
            if (!fences.containsKey(p)) {
                onTaken(p);
            }
        }
        ownedSnapshot = Set.copyOf(new TreeSet<>(fences.keySet()));
    }

    /**
     * The registry this consumer counts itself in: one per group, and per candidate set when partitions
     * were chosen ({@link Builder#partitions}), so consumers share fairly with those that may take the
     * same partitions.
     */
    private String registry() {
        if (settings.partitions == null) {
            return layout.ledgerKey(settings.group + ":consumers");
        }
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(candidates.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        return layout.ledgerKey(settings.group + ":consumers:" + Long.toHexString(crc.getValue()));
    }

    private List<String> heartbeat() {
        String key = registry();
        long expiry = settings.rebalanceInterval.multipliedBy(3).toMillis();
        List<Object> reply = streams.scripts().run(LedgerScripts.HEARTBEAT, new String[]{key}, settings.consumerName,
                Long.toString(expiry)).join();
        if (reply.isEmpty() || !"live".equals(reply.get(0))) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected heartbeat reply " + reply);
        }
        List<String> live = new ArrayList<>();
        for (int i = 1; i < reply.size(); i++) {
            live.add((String) reply.get(i));
        }
        return live;
    }

    private void leaveRegistry() {
        try {
            if (streams != null) {
                streams.commands().zrem(registry(), settings.consumerName);
            }
        } catch (RuntimeException e) {
            log.debug("could not leave the ledger consumers' registry (it forgets silent consumers)", e);
        }
    }

    /** A partition just taken: its group, its fence in the database, then what others left pending. */
    private void onTaken(int p) {
        Lease lease = ownership.lease(p);
        String stream = layout.journal(p);
        streams.ensureGroup(stream);
        PartitionFence fence = new PartitionFence(stream, lease.fencingToken(), settings.consumerName);
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
            fencedCount.incrementAndGet();
            log.error("ledger consumer {} cannot take partition {}: {} (did the lock backend lose its data, or"
                    + " change?); leaving it", settings.consumerName, p, e.getMessage());
            notify(() -> listener.fenced(p, fence.token()));
            ownership.release(p);
            return;
        } catch (SQLException | RuntimeException e) {
            databaseRetries.incrementAndGet();
            log.warn("ledger: recording the owner of partition {} failed ({}); trying again at the next rebalance", p,
                    e.toString());
            notify(() -> listener.databaseUnavailable(e, settings.rebalanceInterval));
            return;
        }
        fences.put(p, fence);
        log.info("ledger consumer {} took partition {} (token {})", settings.consumerName, p, fence.token());
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
            JournalStreams.Claimed claimed = streams.claim(stream, cursor, Duration.ZERO, settings.batchSize);
            List<StreamMessage<String, String>> messages = claimed.entries();
            if (!messages.isEmpty()) {
                claimedCount.addAndGet(messages.size());
                process(p, stream, messages, true);
            }
            cursor = claimed.next();
            if (claimed.done()) {
                break;
            }
        } while (running);
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
        Map<String, List<StreamMessage<String, String>>> byStream = streams.readNew(owned, settings.batchSize,
                settings.blockTime);
        for (Map.Entry<String, List<StreamMessage<String, String>>> e : byStream.entrySet()) {
            Integer p = partitionOf.get(e.getKey());
            if (p != null) {
                process(p, e.getKey(), e.getValue(), false);
            }
        }
    }

    /** One partition's batch: write (fenced, retrying while the database is down), compensate, acknowledge and trim. */
    private void process(int partition, String stream, List<StreamMessage<String, String>> messages, boolean claimed) {
        long started = System.nanoTime();
        List<BatchWriter.Raw> raws = new ArrayList<>(messages.size());
        List<String> ids = new ArrayList<>(messages.size());
        for (StreamMessage<String, String> m : messages) {
            ids.add(m.getId());
            if (m.getBody() != null) {
                raws.add(new BatchWriter.Raw(m.getId(), m.getBody()));
            }
        }
        List<BatchWriter.Step> steps = List.of();
        if (!raws.isEmpty()) {
            steps = writeWithRetry(partition, stream, raws);
            if (steps == null) {
                return; // fenced or lost: not ours to acknowledge; the new owner takes the entries over
            }
        }
        int nApplied = 0;
        int nRedelivered = 0;
        int nQuarantined = 0;
        int nCompensated = 0;
        for (BatchWriter.Step s : steps) {
            switch (s.action) {
                case APPLY -> nApplied++;
                case REDELIVERED, ALREADY_QUARANTINED -> nRedelivered++;
                case QUARANTINE -> {
                    nQuarantined++;
                    QuarantinedEntry q = s.quarantined();
                    log.error("ledger: quarantined journal entry {} of {} ({}): {}; fields {}", s.raw.id(), stream,
                            s.reason, s.detail, s.raw.fields());
                    notify(() -> listener.quarantined(q));
                }
                case COMPENSATE, COMPENSATE_AGAIN -> {
                    if (s.action == BatchWriter.Action.COMPENSATE) {
                        nApplied++;
                    }
                    compensate(stream, s);
                    nCompensated++;
                }
            }
        }
        JournalStreams.Trim trim = streams.ackAndTrim(stream, ids);
        trimmedCount.addAndGet(trim.removed());
        batches.incrementAndGet();
        applied.addAndGet(nApplied);
        redelivered.addAndGet(nRedelivered);
        quarantinedCount.addAndGet(nQuarantined);
        compensatedCount.addAndGet(nCompensated);
        LedgerListener.Batch batch = new LedgerListener.Batch(partition, messages.size(), nApplied, nRedelivered,
                nQuarantined, nCompensated, claimed, Duration.ofNanos(System.nanoTime() - started));
        notify(() -> listener.batchCommitted(batch));
    }

    /** The batch's steps once committed; null when the partition is no longer this consumer's. */
    private List<BatchWriter.Step> writeWithRetry(int partition, String stream, List<BatchWriter.Raw> raws) {
        Duration backoff = settings.initialBackoff;
        while (true) {
            if (!running) {
                throw new Stopped();
            }
            PartitionFence fence = fences.get(partition);
            Lease lease = ownership.lease(partition);
            if (fence == null || lease == null || !lease.isValid()) {
                return null;
            }
            try (Connection c = dataSource.getConnection()) {
                ensureDialect(c);
                return new BatchWriter(dialect, partition, stream, fence).write(c, raws, lockTimeout());
            } catch (PartitionFence.FencedOut e) {
                fencedCount.incrementAndGet();
                log.warn("ledger consumer {}: the database refused a batch of partition {}: {}; it is another"
                        + " consumer's now", settings.consumerName, partition, e.getMessage());
                notify(() -> listener.fenced(partition, fence.token()));
                fences.remove(partition);
                ownership.release(partition);
                ownedSnapshot = Set.copyOf(new TreeSet<>(fences.keySet()));
                return null;
            } catch (SQLException | RuntimeException e) {
                if (e instanceof Stopped) {
                    throw (Stopped) e;
                }
                databaseRetries.incrementAndGet();
                Duration wait = backoff;
                log.warn("ledger: writing a batch of {} entries failed ({}); retrying in {} ms", raws.size(), e.toString(),
                        wait.toMillis());
                notify(() -> listener.databaseUnavailable(e, wait));
                pause(wait);
                backoff = next(backoff);
            }
        }
    }

    /**
     * How long a statement may wait for a row lock: a superseded owner frozen inside a transaction holds
     * its partition's row, and the new owner must not wait for it forever.
     */
    private Duration lockTimeout() {
        return config.requestTimeout();
    }

    private void ensureDialect(Connection c) throws SQLException {
        if (dialect == null) {
            dialect = Ledger.Dialect.of(c);
            Ledger.verifySchema(dataSource);
        }
    }

    /**
     * Undoes a replay in Redis under a derived request id. Throws when Redis is unavailable: the batch
     * then stays unacknowledged, and the redelivery compensates again (idempotent by that request id).
     */
    private void compensate(String stream, BatchWriter.Step s) {
        JournalEntry e = s.entry;
        String requestId = s.compensationRequestId();
        Outcome outcome = s.compensationKind() == EntryKind.REFUND
                ? quota.refund(e.account(), e.amount(), requestId)
                : quota.deduct(e.account(), e.amount(), requestId);
        String status = outcome.status().name();
        if (outcome.isApplied()) {
            log.warn("ledger: request id '{}' of account {} reached Redis again after its idempotency record expired"
                    + " (entry {}); compensated with a {} of {} as '{}'", e.requestId(), e.account(), e.entryId(),
                    s.compensationKind().wireName(), e.amount(), requestId);
        } else {
            log.error("ledger: could not compensate the replay of request id '{}' of account {} (entry {}): Redis"
                    + " answered {}; reconciliation will report the drift", e.requestId(), e.account(), e.entryId(), outcome);
        }
        try (Connection c = dataSource.getConnection()) {
            BatchWriter.recordOutcome(c, stream, s.position, status);
        } catch (SQLException | RuntimeException ex) {
            log.warn("ledger: could not record the outcome {} of compensation {} (its journal entry records it)", status,
                    requestId, ex);
        }
        Compensation compensation = new Compensation(e, requestId, s.compensationKind(), status);
        notify(() -> listener.compensated(compensation));
    }

    private void reportLag() {
        for (int p : fences.keySet()) {
            JournalStreams.Backlog b = streams.backlog(layout.journal(p));
            notify(() -> listener.lag(p, b.pending(), b.undelivered()));
        }
    }

    private Duration next(Duration backoff) {
        Duration doubled = backoff.multipliedBy(2);
        return doubled.compareTo(settings.maxBackoff) > 0 ? settings.maxBackoff : doubled;
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

    /** The consumer's settings; {@link #build()} checks them all and reports every problem at once. */
    public static final class Builder {

        private final Map<String, ?> quotaSettings;
        private final DataSource dataSource;
        private String group = DEFAULT_GROUP;
        private String consumerName = defaultConsumerName();
        private Collection<Integer> partitions;
        private int batchSize = 500;
        private Duration blockTime = Duration.ofSeconds(1);
        private Duration sweepInterval = Duration.ofSeconds(1);
        private Duration rebalanceInterval = Duration.ofSeconds(2);
        private Duration initialBackoff = Duration.ofMillis(100);
        private Duration maxBackoff = Duration.ofSeconds(10);
        private Duration lagInterval = Duration.ofSeconds(10);
        private LockClient locks;
        private LedgerListener listener = new LedgerListener() {
        };

        private Builder(Map<String, ?> quotaSettings, DataSource dataSource) {
            this.quotaSettings = Map.copyOf(Objects.requireNonNull(quotaSettings, "quotaSettings"));
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        }

        /** The consumer group; default {@value LedgerConsumer#DEFAULT_GROUP}. */
        public Builder group(String group) {
            this.group = group;
            return this;
        }

        /** This consumer's name in the group, unique among the running consumers; default {@code <host>-<pid>}. */
        public Builder consumerName(String consumerName) {
            this.consumerName = consumerName;
            return this;
        }

        /** The partitions this consumer may own; default all. */
        public Builder partitions(Collection<Integer> partitions) {
            this.partitions = List.copyOf(partitions);
            return this;
        }

        /** Most entries read per partition per round, and so per transaction; 1..10000, default 500. */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /** How long one read waits for new entries; below the request timeout; default 1 s. */
        public Builder blockTime(Duration blockTime) {
            this.blockTime = blockTime;
            return this;
        }

        /** How often owned partitions are swept for entries left pending on other consumers; default 1 s. */
        public Builder sweepInterval(Duration sweepInterval) {
            this.sweepInterval = sweepInterval;
            return this;
        }

        /**
         * How often the consumer registers, drops lost partitions and rebalances; a consumer silent for
         * three intervals is no longer counted; default 2 s.
         */
        public Builder rebalanceInterval(Duration rebalanceInterval) {
            this.rebalanceInterval = rebalanceInterval;
            return this;
        }

        /** Backoff between retries while the database or Redis fails: doubles from {@code initial} up to {@code max}. */
        public Builder retryBackoff(Duration initial, Duration max) {
            this.initialBackoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /** How often {@link LedgerListener#lag} is called; default 10 s. */
        public Builder lagInterval(Duration lagInterval) {
            this.lagInterval = lagInterval;
            return this;
        }

        /**
         * The lock client that owns partitions, kept open by the consumer's owner (default: one of the
         * consumer's own, from the {@code warden.lock.*} settings). Its TTL bounds how long a dead
         * consumer's partitions wait for a new owner.
         */
        public Builder locks(LockClient locks) {
            this.locks = Objects.requireNonNull(locks, "locks");
            return this;
        }

        public Builder listener(LedgerListener listener) {
            this.listener = Objects.requireNonNull(listener, "listener");
            return this;
        }

        /**
         * @throws QuotaException {@link Reason#CONFIGURATION} listing every problem
         */
        public LedgerConsumer build() {
            List<String> problems = new ArrayList<>();
            QuotaConfig config = null;
            try {
                config = QuotaConfig.from(quotaSettings);
            } catch (QuotaException e) {
                problems.add(e.getMessage());
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
            return new LedgerConsumer(this, config);
        }

        /** {@link #build()} then {@link LedgerConsumer#start()}. */
        public LedgerConsumer start() {
            return build().start();
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

        private static String defaultConsumerName() {
            String host;
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (Exception e) {
                host = "host";
            }
            return host + "-" + ManagementFactory.getRuntimeMXBean().getPid();
        }
    }
}
