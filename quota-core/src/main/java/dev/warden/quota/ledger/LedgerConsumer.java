package dev.warden.quota.ledger;

import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaService;
import dev.warden.quota.internal.KeyLayout;
import dev.warden.quota.internal.QuotaConfig;
import dev.warden.quota.ledger.internal.RedisLink;
import io.lettuce.core.Consumer;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XAutoClaimArgs;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.XReadArgs.StreamOffset;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.models.stream.ClaimedMessages;
import io.lettuce.core.models.stream.PendingMessages;
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
import java.util.HashSet;
import java.util.LinkedHashMap;
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
 * in effect.
 *
 * <p>Per partition stream a consumer group ({@code XGROUP CREATE ... MKSTREAM}, created when missing,
 * also after Redis lost its data). One thread reads batches with {@code XREADGROUP} (at most
 * {@link Builder#batchSize} entries per partition, blocking at most {@link Builder#blockTime}) and writes
 * each partition's batch in one database transaction: the entry is inserted under its request id
 * (primary key, so a redelivery is a no-op) and applied to the account's balance
 * ({@code CHECK (balance >= 0)}); the transaction commits; then the entries are {@code XACK}ed. A
 * crash anywhere before the acknowledgement leaves the entries pending, and they are delivered again:
 * to this consumer name when it restarts, or claimed back ({@code XAUTOCLAIM}) by any consumer of the
 * group once they have been idle for {@link Builder#claimIdle}. A partition whose stream has entries
 * pending on another consumer is not read further until they are claimed, so a partition's entries
 * are applied in journal order.
 *
 * <p>An entry the database refuses (a constraint fails, the account is unknown, the entry is
 * malformed) is stored in {@code ledger_quarantine}, logged, counted and reported to the listener,
 * then acknowledged; the rest of its batch is applied. A second entry for a request id the ledger
 * already holds (a retry that reached Redis after its idempotency record expired) is applied and then
 * compensated in Redis: see {@link Compensation}.
 *
 * <p>When the database fails, the batch is retried with exponential backoff (the entries stay pending
 * in Redis meanwhile, and nothing else is read: that is the backpressure); when it returns the
 * consumer catches up. When Redis fails, the consumer waits and reconnects likewise.
 *
 * <p>Run one consumer per partition at a time (all partitions by default; split them with
 * {@link Builder#partitions}). A second live consumer on the same partitions is harmless to the totals
 * (the request-id key and the constraints still hold) but may apply a partition's entries out of
 * order, which can make the balance check refuse an entry spuriously; a restarted or replacement
 * consumer is what {@code XAUTOCLAIM} is for.
 */
public final class LedgerConsumer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LedgerConsumer.class);

    /** The default consumer group. */
    public static final String DEFAULT_GROUP = "warden-ledger";

    /** Counters since start. */
    public record Stats(long batches, long applied, long redelivered, long quarantined, long compensated,
                        long claimed, long databaseRetries, long redisRetries) {
    }

    private final Builder settings;
    private final QuotaConfig config;
    private final KeyLayout layout;
    private final DataSource dataSource;
    private final LedgerListener listener;
    private final List<Integer> partitions;
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
    private volatile boolean running;
    private volatile boolean closed;

    private RedisLink link;
    private RedisCommands<String, String> redis;
    private RedisCommands<String, String> queries;
    private QuotaService quota;
    private final Set<String> blocked = new HashSet<>();

    private LedgerConsumer(Builder b, QuotaConfig config) {
        this.settings = b;
        this.config = config;
        this.layout = new KeyLayout(config.partitions());
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
        this.partitions = List.copyOf(chosen);
        for (int p : partitions) {
            partitionOf.put(layout.journal(p), p);
        }
    }

    /**
     * @param quotaSettings the quota service's settings ({@code warden.quota.endpoint},
     *                      {@code warden.quota.partitions}, timeouts): the consumer connects to the same
     *                      Redis, and compensates through a quota service of its own
     * @param dataSource    the ledger database (its tables must exist: {@link Ledger#createSchema})
     */
    public static Builder builder(Map<String, ?> quotaSettings, DataSource dataSource) {
        return new Builder(quotaSettings, dataSource);
    }

    /**
     * Connects and starts the consumer thread. The database is not needed yet: while it is down the
     * consumer retries.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot be reached;
     *         {@link Reason#CLOSED} after {@link #close()}; {@link IllegalStateException} when started twice
     */
    public synchronized LedgerConsumer start() {
        if (closed) {
            throw new QuotaException(Reason.CLOSED, "the ledger consumer is closed");
        }
        if (thread.get() != null) {
            throw new IllegalStateException("the ledger consumer is already started");
        }
        link = RedisLink.create(config);
        try {
            redis = link.connect().sync();
            queries = link.connect().sync();
            Map<String, Object> quotaSettings = new HashMap<>(settings.quotaSettings);
            quotaSettings.keySet().removeIf(k -> k.startsWith("warden.lock."));
            quotaSettings.put("warden.quota.lock", "none");
            quota = QuotaService.create(quotaSettings);
        } catch (RuntimeException e) {
            link.close();
            throw e;
        }
        running = true;
        Thread t = new Thread(this::run, "warden-ledger-" + settings.consumerName);
        t.setDaemon(true);
        thread.set(t);
        t.start();
        log.info("ledger consumer {} of group {} started on {} partitions of {}", settings.consumerName, settings.group,
                partitions.size(), link.endpoint());
        return this;
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

    /** Counters since start. */
    public Stats stats() {
        return new Stats(batches.get(), applied.get(), redelivered.get(), quarantinedCount.get(), compensatedCount.get(),
                claimedCount.get(), databaseRetries.get(), redisRetries.get());
    }

    /**
     * Entries of this consumer's partitions that are not yet in the database: pending (delivered, not
     * acknowledged) plus not yet delivered. Zero means drained.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} when Redis cannot answer
     */
    public long backlog() {
        RedisCommands<String, String> q = queries;
        if (q == null) {
            throw new IllegalStateException("the ledger consumer is not started");
        }
        long total = 0;
        try {
            for (int p : partitions) {
                long[] pl = pendingAndLag(q, layout.journal(p), settings.group);
                total += pl[0] + pl[1];
            }
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + link.endpoint() + " could not report the"
                    + " ledger's backlog: " + e.getMessage(), e);
        }
        return total;
    }

    /**
     * Stops the thread: a batch being written finishes or is abandoned unacknowledged (it is delivered
     * again later); waits up to the block time plus a few seconds. Idempotent.
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

    /** Stops, then closes the Redis connections and the compensating quota service. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop();
        if (quota != null) {
            quota.close();
        }
        if (link != null) {
            link.close();
        }
    }

    @Override
    public String toString() {
        return "LedgerConsumer[" + settings.group + "/" + settings.consumerName + ", " + partitions.size() + " partitions]";
    }

    // ---- the loop ----

    private void run() {
        Duration backoff = settings.initialBackoff;
        boolean groupsReady = false;
        boolean ownPending = true;
        long nextClaim = 0;
        long nextLag = System.nanoTime();
        while (running) {
            try {
                if (!groupsReady) {
                    ensureGroups();
                    groupsReady = true;
                }
                if (ownPending) {
                    readOwnPending();
                    ownPending = false;
                }
                if (System.nanoTime() - nextClaim >= 0) {
                    claim();
                    nextClaim = System.nanoTime() + claimInterval().toNanos();
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
                if (isNoGroup(e)) {
                    log.warn("the ledger's consumer group is gone (Redis lost its data?): creating it again");
                    groupsReady = false;
                    ownPending = true;
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
                groupsReady = false;
                ownPending = true;
            }
        }
        running = false;
        log.info("ledger consumer {} stopped", settings.consumerName);
    }

    private Duration claimInterval() {
        Duration half = settings.claimIdle.dividedBy(2);
        return half.compareTo(Duration.ofMillis(100)) < 0 ? Duration.ofMillis(100) : half;
    }

    private void ensureGroups() {
        for (int p : partitions) {
            try {
                redis.xgroupCreate(StreamOffset.from(layout.journal(p), "0-0"), settings.group,
                        XGroupCreateArgs.Builder.mkstream());
            } catch (RedisBusyException e) {
                // BUSYGROUP: it exists.
            } catch (RedisCommandExecutionException e) {
                if (e.getMessage() == null || !e.getMessage().startsWith("BUSYGROUP")) {
                    throw e;
                }
            }
        }
    }

    /** Entries delivered to this consumer name before (a restart with the same name): first, in order. */
    private void readOwnPending() {
        Consumer<String> me = Consumer.from(settings.group, settings.consumerName);
        for (int p : partitions) {
            String stream = layout.journal(p);
            String after = "0-0";
            while (running) {
                List<StreamMessage<String, String>> page = redis.xreadgroup(me,
                        XReadArgs.Builder.count(settings.batchSize), StreamOffset.from(stream, after));
                if (page == null || page.isEmpty()) {
                    break;
                }
                process(p, stream, page, false);
                after = page.get(page.size() - 1).getId();
            }
        }
    }

    /** Claims entries idle for the claim time on other (dead) consumers; notes partitions still held by others. */
    private void claim() {
        Consumer<String> me = Consumer.from(settings.group, settings.consumerName);
        for (int p : partitions) {
            String stream = layout.journal(p);
            String cursor = "0-0";
            do {
                ClaimedMessages<String, String> claimed = redis.xautoclaim(stream, new XAutoClaimArgs<String>()
                        .consumer(me).minIdleTime(settings.claimIdle).startId(cursor).count(settings.batchSize));
                List<StreamMessage<String, String>> messages = claimed.getMessages().stream()
                        .filter(m -> m.getBody() != null).toList();
                if (!messages.isEmpty()) {
                    claimedCount.addAndGet(messages.size());
                    log.info("ledger consumer {} claimed {} entries of {} idle for {} ms or more", settings.consumerName,
                            messages.size(), stream, settings.claimIdle.toMillis());
                    process(p, stream, messages, true);
                }
                cursor = claimed.getId();
            } while (running && cursor != null && !cursor.equals("0-0"));
            PendingMessages pending = redis.xpending(stream, settings.group);
            long others = 0;
            for (Map.Entry<String, Long> e : pending.getConsumerMessageCount().entrySet()) {
                if (!e.getKey().equals(settings.consumerName)) {
                    others += e.getValue();
                }
            }
            if (others > 0) {
                if (blocked.add(stream)) {
                    log.info("{} has {} entries pending on other consumers: reading it again once they are claimed"
                            + " (after {} ms idle) or acknowledged", stream, others, settings.claimIdle.toMillis());
                }
            } else {
                blocked.remove(stream);
            }
        }
    }

    private void readNew() {
        List<StreamOffset<String>> offsets = new ArrayList<>();
        for (int p : partitions) {
            String stream = layout.journal(p);
            if (!blocked.contains(stream)) {
                offsets.add(StreamOffset.lastConsumed(stream));
            }
        }
        if (offsets.isEmpty()) {
            pause(claimInterval());
            return;
        }
        @SuppressWarnings("unchecked")
        StreamOffset<String>[] array = offsets.toArray(new StreamOffset[0]);
        List<StreamMessage<String, String>> messages = redis.xreadgroup(
                Consumer.from(settings.group, settings.consumerName),
                XReadArgs.Builder.count(settings.batchSize).block(settings.blockTime), array);
        if (messages == null || messages.isEmpty()) {
            return;
        }
        Map<String, List<StreamMessage<String, String>>> byStream = new LinkedHashMap<>();
        for (StreamMessage<String, String> m : messages) {
            byStream.computeIfAbsent(m.getStream(), k -> new ArrayList<>()).add(m);
        }
        for (Map.Entry<String, List<StreamMessage<String, String>>> e : byStream.entrySet()) {
            Integer p = partitionOf.get(e.getKey());
            if (p != null) {
                process(p, e.getKey(), e.getValue(), false);
            }
        }
    }

    /** One partition's batch: write (retrying while the database is down), compensate, acknowledge. */
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
        BatchWriter writer = new BatchWriter(partition, stream);
        List<BatchWriter.Step> steps = raws.isEmpty() ? List.of() : writeWithRetry(writer, raws);

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
        redis.xack(stream, settings.group, ids.toArray(new String[0]));
        batches.incrementAndGet();
        applied.addAndGet(nApplied);
        redelivered.addAndGet(nRedelivered);
        quarantinedCount.addAndGet(nQuarantined);
        compensatedCount.addAndGet(nCompensated);
        LedgerListener.Batch batch = new LedgerListener.Batch(partition, messages.size(), nApplied, nRedelivered,
                nQuarantined, nCompensated, claimed, Duration.ofNanos(System.nanoTime() - started));
        notify(() -> listener.batchCommitted(batch));
    }

    private List<BatchWriter.Step> writeWithRetry(BatchWriter writer, List<BatchWriter.Raw> raws) {
        Duration backoff = settings.initialBackoff;
        while (true) {
            if (!running) {
                throw new Stopped();
            }
            try (Connection c = dataSource.getConnection()) {
                return writer.write(c, raws);
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
        for (int p : partitions) {
            long[] pl = pendingAndLag(redis, layout.journal(p), settings.group);
            notify(() -> listener.lag(p, pl[0], pl[1]));
        }
    }

    /** {pending, not yet delivered} of a stream for the group; everything is undelivered when the group is missing. */
    static long[] pendingAndLag(RedisCommands<String, String> r, String stream, String group) {
        List<Object> groups;
        try {
            groups = r.xinfoGroups(stream);
        } catch (RedisCommandExecutionException e) {
            // ERR no such key: an empty partition.
            return new long[]{0, 0};
        }
        for (Object g : groups) {
            Map<String, Object> info = asMap(g);
            if (group.equals(info.get("name"))) {
                long pending = toLong(info.get("pending"));
                Object lag = info.get("lag");
                long undelivered;
                if (lag != null) {
                    undelivered = toLong(lag);
                } else {
                    String last = String.valueOf(info.get("last-delivered-id"));
                    undelivered = r.xrange(stream, io.lettuce.core.Range.create("(" + last, "+")).size();
                }
                return new long[]{pending, undelivered};
            }
        }
        return new long[]{0, r.xlen(stream)};
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> asMap(Object g) {
        if (g instanceof Map<?, ?> m) {
            return (Map<String, Object>) m;
        }
        Map<String, Object> map = new HashMap<>();
        List<Object> list = (List<Object>) g;
        for (int i = 0; i + 1 < list.size(); i += 2) {
            map.put(String.valueOf(list.get(i)), list.get(i + 1));
        }
        return map;
    }

    private static long toLong(Object o) {
        return o instanceof Number n ? n.longValue() : Long.parseLong(String.valueOf(o));
    }

    private static boolean isNoGroup(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t.getMessage() != null && t.getMessage().startsWith("NOGROUP")) {
                return true;
            }
        }
        return false;
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
        private int batchSize = 200;
        private Duration blockTime = Duration.ofSeconds(1);
        private Duration claimIdle = Duration.ofSeconds(30);
        private Duration initialBackoff = Duration.ofMillis(100);
        private Duration maxBackoff = Duration.ofSeconds(10);
        private Duration lagInterval = Duration.ofSeconds(10);
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

        /** This consumer's name in the group; default {@code <host>-<pid>}. */
        public Builder consumerName(String consumerName) {
            this.consumerName = consumerName;
            return this;
        }

        /** The partitions this consumer handles; default all. */
        public Builder partitions(Collection<Integer> partitions) {
            this.partitions = List.copyOf(partitions);
            return this;
        }

        /** Most entries read per partition per round, and so per transaction; 1..10000, default 200. */
        public Builder batchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /** How long one read waits for new entries; below the request timeout; default 1 s. */
        public Builder blockTime(Duration blockTime) {
            this.blockTime = blockTime;
            return this;
        }

        /** How long an entry must sit unacknowledged on another consumer before it is claimed; default 30 s. */
        public Builder claimIdle(Duration claimIdle) {
            this.claimIdle = claimIdle;
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
            if (group == null || group.isBlank()) {
                problems.add("group must not be blank");
            }
            if (consumerName == null || consumerName.isBlank()) {
                problems.add("consumerName must not be blank");
            }
            if (batchSize < 1 || batchSize > 10_000) {
                problems.add("batchSize must be 1..10000, was " + batchSize);
            }
            positive(problems, "blockTime", blockTime);
            positive(problems, "claimIdle", claimIdle);
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
