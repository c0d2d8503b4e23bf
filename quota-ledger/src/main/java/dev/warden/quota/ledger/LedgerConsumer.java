package dev.warden.quota.ledger;

import dev.warden.lock.LockClient;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.internal.consume.ConsumerCounters;
import dev.warden.quota.ledger.internal.consume.ConsumerLoop;
import dev.warden.quota.ledger.internal.consume.ConsumerRegistry;
import dev.warden.quota.ledger.internal.consume.ConsumerSettings;
import dev.warden.quota.ledger.internal.consume.PartitionOwnership;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
import dev.warden.quota.ledger.journal.Compensation;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.shared.QuotaServices;
import dev.warden.quota.redis.QuotaConfig;
import dev.warden.quota.redis.RedisConnector;
import io.lettuce.core.RedisException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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

    private final Builder builder;
    private final ConsumerSettings settings;
    private final QuotaConfig config;
    private final KeyLayout layout;
    private final ConsumerCounters counters = new ConsumerCounters();
    private final AtomicReference<Thread> thread = new AtomicReference<>();
    private volatile boolean closed;

    // Set by start() under this object's lock; the loop confines its own parts to its thread.
    private volatile ConsumerLoop loop;
    private RedisConnector connector;
    private JournalStreams queries;
    private LockClient locks;
    private boolean ownLocks;
    private QuotaService quota;

    private LedgerConsumer(Builder b, QuotaConfig config, ConsumerSettings settings) {
        this.builder = b;
        this.config = config;
        this.layout = config.layout();
        this.settings = settings;
    }

    /**
     * @param quotaSettings the quota service's settings ({@code warden.quota.*}: endpoint, namespace,
     *                      partitions, timeouts) and the consumer's own ({@code warden.ledger.*},
     *                      {@link LedgerSettings}; a builder method overrides one): the consumer opens one Redis client there, and reads the
     *                      journal and compensates (a quota service without a lock) on connections of that
     *                      client. Its {@code warden.lock.*} settings choose
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
        ConsumerLoop made;
        try {
            JournalStreams streams = new JournalStreams(connector.connect(), settings.group(), settings.consumerName(),
                    config.requestTimeout());
            queries = new JournalStreams(connector.connect(), settings.group(), null, config.requestTimeout());
            // Compensations go through the engine on this consumer's client: one Redis client per consumer.
            quota = QuotaServices.over(connector, config.withoutLock());
            if (builder.locks != null) {
                locks = builder.locks;
            } else {
                locks = PartitionOwnership.defaultLocks(config);
                ownLocks = true;
            }
            made = new ConsumerLoop(new ConsumerLoop.Parts(settings, layout, builder.dataSource, builder.listener, streams,
                    quota, new PartitionOwnership(locks, layout, settings.group(), settings.candidates()),
                    new ConsumerRegistry(streams, layout, settings), counters));
        } catch (RuntimeException e) {
            closeParts();
            throw e;
        }
        loop = made;
        Thread t = new Thread(made, "warden-ledger-" + settings.consumerName());
        t.setDaemon(true);
        thread.set(t);
        t.start();
        log.info("ledger consumer {} of group {} started: {} candidate partitions of {}, locks on {}",
                settings.consumerName(), settings.group(), settings.candidates().size(), connector.endpoint(), locks.backend());
        return this;
    }

    /** Whether the consumer thread is running. */
    public boolean isRunning() {
        Thread t = thread.get();
        ConsumerLoop l = loop;
        return l != null && l.running() && t != null && t.isAlive();
    }

    /** The consumer's name in the group. */
    public String consumerName() {
        return settings.consumerName();
    }

    /** The consumer group. */
    public String group() {
        return settings.group();
    }

    /** The partitions this consumer owns now (its leases), in order. */
    public Set<Integer> partitions() {
        ConsumerLoop l = loop;
        return l == null ? Set.of() : l.owned();
    }

    /** Counters since start. */
    public Stats stats() {
        long[] n = counters.snapshot();
        return new Stats(n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9]);
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
            for (JournalStreams.Backlog b : queries.backlogs(settings.candidates().stream().map(layout::journal).toList())
                    .values()) {
                total += b.total();
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
        ConsumerLoop l = loop;
        if (l != null) {
            l.requestStop();
        }
        Thread t = thread.get();
        if (t != null && t != Thread.currentThread()) {
            try {
                t.join(settings.blockTime().plusSeconds(5).toMillis());
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
        return "LedgerConsumer[" + settings.group() + "/" + settings.consumerName() + ", " + settings.candidates().size()
                + " partitions]";
    }

    /** The consumer's settings; {@link #build()} checks them all and reports every problem at once. */
    public static final class Builder {

        private final Map<String, ?> quotaSettings;
        private final DataSource dataSource;
        private String group = DEFAULT_GROUP;
        private String consumerName = ConsumerSettings.defaultConsumerName();
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

        private final List<String> settingProblems;

        private Builder(Map<String, ?> quotaSettings, DataSource dataSource) {
            this.quotaSettings = Map.copyOf(Objects.requireNonNull(quotaSettings, "quotaSettings"));
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
            this.settingProblems = LedgerSettings.apply(this.quotaSettings, this);
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
            QuotaConfig config = null;
            String configProblem = null;
            try {
                config = QuotaConfig.from(quotaSettings);
            } catch (QuotaException e) {
                configProblem = e.getMessage();
            }
            if (!settingProblems.isEmpty()) {
                configProblem = (configProblem == null ? "" : configProblem + "; ") + String.join("; ", settingProblems);
            }
            ConsumerSettings settings = ConsumerSettings.checked(configProblem, config, group, consumerName, partitions,
                    batchSize, blockTime, sweepInterval, rebalanceInterval, initialBackoff, maxBackoff, lagInterval);
            return new LedgerConsumer(this, config, settings);
        }

        /** {@link #build()} then {@link LedgerConsumer#start()}. */
        public LedgerConsumer start() {
            return build().start();
        }
    }
}
