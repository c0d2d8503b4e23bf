package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.internal.journal.JournalStreams;
import dev.warden.quota.ledger.internal.journal.JournalTail;
import dev.warden.quota.ledger.internal.journal.LedgerScripts;
import dev.warden.quota.ledger.internal.reconcile.AccountComparison;
import dev.warden.quota.ledger.internal.reconcile.Bootstrap;
import dev.warden.quota.ledger.internal.reconcile.LedgerFigures;
import dev.warden.quota.ledger.internal.reconcile.Pages;
import dev.warden.quota.ledger.internal.reconcile.ReconciliationSchedule;
import dev.warden.quota.ledger.internal.reconcile.RecoveryOrder;
import dev.warden.quota.ledger.reconcile.BootstrapReport;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.shared.QuotaServices;
import dev.warden.quota.redis.QuotaConfig;
import dev.warden.quota.redis.RedisConnector;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Compares Redis with the ledger database, repairs Redis from the database, and loads an empty Redis
 * from the database: in bounded memory, and only within its namespace.
 *
 * <p><b>Check.</b> Two passes, each in pages of {@value #PAGE} accounts: the database's accounts in
 * key order (keyset paging), then Redis's account keys of this namespace ({@code SCAN MATCH}, on every
 * primary of a Cluster in turn) that the database lacks. Each page is split by partition and each part compared by {@link AccountComparison}:
 * the Redis balance (available + held) against the database's (the same) plus the changes of the account's journal entries not yet
 * persisted (read once per partition per run, from where the consumer group's unacknowledged entries
 * begin). Memory is a page, the journal's unpersisted tail and the first {@value #MAX_REPORTED} drifts
 * (the rest are counted). The tail is bounded, whatever the backlog: a run that would hold more than
 * {@value #MAX_UNPERSISTED} entries of it is refused ({@link Reason#RECOVERY_ORDER}: let the consumers drain
 * first), since with that much in flight nearly every account is moving and the comparison says little.
 *
 * <p><b>Split accounts</b> ({@code QuotaService.split}): the account key says so; the account is compared as
 * the sum of its buckets, one snapshot per partition of its buckets, each against its own journal stream
 * (moves between buckets are entries of both streams, so a move in flight counts on both sides or neither).
 * A split account's drift is reported, never repaired (merge it first).
 *
 * <p><b>Repair</b> (dry run unless asked): for each drifted account with no entry in flight, sets the
 * Redis balance to the database's (the database wins), with a compare-and-set on the balance seen,
 * so a change landing in between is never overwritten. Accounts only Redis holds are reported, never
 * deleted. No journal entry is written: the ledger already holds the balance. It refuses to run while the
 * ledger is not the whole truth ({@link RecoveryOrder}): before bootstrap, or over unresolved quarantine or
 * refused compensations.
 *
 * <p><b>Bootstrap</b>: after Redis lost its data, writes every database account that Redis lacks, whole
 * (available and held quota, open holds, fence mark, named balances), then every partition's marker
 * (quota-core writes a partition's marker when the first account there is opened, and a partition without
 * one answers DATA_LOST, so bootstrap writes all of them, also for partitions that hold no account), then
 * the compensations the ledger owed. Idempotent: accounts Redis holds are left alone. Run it before
 * letting traffic back in; the journal consumer recreates its consumer groups by itself. A split
 * account comes back as one (its buckets were a placement, not money): split it again if it is still hot.
 *
 * <p>One run at a time per instance (its connection is confined to the running thread; methods are
 * synchronized).
 */
public final class Reconciler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

    /** Accounts per page of either pass. */
    public static final int PAGE = Pages.ACCOUNTS;
    /** Drifts, repairs and skipped accounts listed in a report; the rest are counted. */
    public static final int MAX_REPORTED = 1000;
    /**
     * Unpersisted journal entries one run holds at once, at most (about 180 bytes each, so some 36 MB): beyond,
     * the run is refused. A ledger that keeps up has a few thousand.
     */
    public static final long MAX_UNPERSISTED = 200_000;

    private final KeyLayout layout;
    private final DataSource dataSource;
    private final RedisConnector connector;
    private final JournalStreams streams;
    private final RedisClusterCommands<String, String> redis;
    private final AccountComparison comparison;
    private final long waitMillis;
    private final Duration retention;
    /** The engine's settings without a lock: bootstrap's compensations carry request ids, never a price. */
    private final QuotaConfig unlocked;
    /** {@link #MAX_UNPERSISTED}; lower in tests (guarded by this). */
    private long maxUnpersisted = MAX_UNPERSISTED;
    /** For bootstrap's owed compensations, opened on first use (guarded by this). */
    private QuotaService quota;

    private Reconciler(QuotaConfig config, DataSource dataSource, String group) {
        this.layout = config.layout();
        this.dataSource = dataSource;
        this.connector = RedisConnector.create(config);
        try {
            this.streams = new JournalStreams(connector.connect(), group, null, config.requestTimeout());
        } catch (RuntimeException e) {
            connector.close();
            throw e;
        }
        this.redis = streams.commands();
        this.waitMillis = config.requestTimeout().multipliedBy(3).plusSeconds(1).toMillis();
        this.comparison = new AccountComparison(layout, streams, waitMillis);
        this.retention = config.idempotencyRetention();
        this.unlocked = config.withoutLock();
    }

    /** With the consumer group {@value LedgerConsumer#DEFAULT_GROUP}. */
    public static Reconciler create(Map<String, ?> quotaSettings, DataSource dataSource) {
        return create(quotaSettings, dataSource, LedgerConsumer.DEFAULT_GROUP);
    }

    /**
     * @param quotaSettings the quota service's settings (endpoint, namespace, partitions, timeouts)
     * @param group         the journal consumer's group, whose unacknowledged entries count as not yet persisted
     * @throws QuotaException {@link Reason#CONFIGURATION}, or {@link Reason#UNAVAILABLE} when Redis cannot be reached
     */
    public static Reconciler create(Map<String, ?> quotaSettings, DataSource dataSource, String group) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(group, "group");
        return new Reconciler(QuotaConfig.from(Objects.requireNonNull(quotaSettings, "quotaSettings")), dataSource, group);
    }

    // ---- check and repair ----

    private enum Mode { CHECK, PLAN, APPLY }

    /** One run's findings, bounded: counts, and the first {@link #MAX_REPORTED} of each list. */
    private final class Run {
        final Mode mode;
        final Instant at = Instant.now();
        final Map<Integer, JournalTail> tails = new HashMap<>();
        final JournalTail.Budget budget = new JournalTail.Budget(maxUnpersisted);
        final Set<Integer> withoutMarker = new TreeSet<>();
        final List<ReconciliationReport.Drift> drifted = new ArrayList<>();
        final List<RepairReport.Repair> repairs = new ArrayList<>();
        final List<ReconciliationReport.Drift> skipped = new ArrayList<>();
        long checked;
        long driftedTotal;
        long repairsTotal;
        long unpersisted;

        Run(Mode mode) {
            this.mode = mode;
        }

        JournalTail tail(int p) {
            return tails.computeIfAbsent(p, k -> JournalTail.open(streams, layout.journal(k), budget));
        }
    }

    /** For tests: a smaller bound on the unpersisted entries one run holds. */
    synchronized void maxUnpersisted(long entries) {
        this.maxUnpersisted = entries;
    }

    /**
     * Compares every account.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} (Redis), {@link Reason#DATABASE}; {@link Reason#RECOVERY_ORDER}
     *         when the journal holds more than {@link #MAX_UNPERSISTED} entries the ledger has not persisted
     */
    public synchronized ReconciliationReport check() {
        return report(run(Mode.CHECK));
    }

    /**
     * Rewrites Redis from the database for drifted accounts with no entry in flight, as the check finds them.
     * Refused, before anything is written, while the ledger is not the whole truth: a partition holding
     * ledger accounts has no marker (Redis lost its data: bootstrap first), or quarantined entries or refused
     * compensations are unresolved (a person first); see {@code docs/operations.md}.
     *
     * @param apply false for a dry run (the default of the CLI): nothing is written
     * @throws QuotaException {@link Reason#RECOVERY_ORDER} saying what to run or resolve first, even for a dry run
     */
    public synchronized RepairReport repair(boolean apply) {
        try (Connection c = dataSource.getConnection()) {
            RecoveryOrder.checkRepair(c, layout, redis);
        } catch (SQLException e) {
            throw database(e);
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + connector.endpoint() + " failed: " + e.getMessage(), e);
        }
        Run run = run(apply ? Mode.APPLY : Mode.PLAN);
        return new RepairReport(apply, run.repairs, run.repairsTotal, run.skipped, report(run));
    }

    private ReconciliationReport report(Run run) {
        long quarantine;
        long compensations;
        try (Connection c = dataSource.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM ledger_quarantine WHERE resolved_at IS NULL");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            quarantine = rs.getLong(1);
            compensations = RecoveryOrder.unresolvedCompensations(c);
        } catch (SQLException e) {
            throw database(e);
        }
        List<ReconciliationReport.Drift> drifted = new ArrayList<>(run.drifted);
        drifted.sort((x, y) -> x.account().compareTo(y.account()));
        return new ReconciliationReport(run.at, run.checked, drifted, run.driftedTotal, List.copyOf(run.withoutMarker),
                run.unpersisted, quarantine, compensations);
    }

    private Run run(Mode mode) {
        Run run = new Run(mode);
        try (Connection c = dataSource.getConnection()) {
            // Pass 1: every account the database holds, in key order.
            String after = "";
            while (true) {
                List<String> page = LedgerFigures.accountsAfter(c, after, PAGE);
                if (page.isEmpty()) {
                    break;
                }
                compareAll(c, page, run);
                after = page.get(page.size() - 1);
            }
            // Pass 2: accounts only Redis holds.
            ScanArgs args = ScanArgs.Builder.matches(layout.accountPattern()).limit(PAGE);
            KeyScanCursor<String> cursor = redis.scan(args);
            while (true) {
                List<String> accounts = new ArrayList<>();
                for (String key : cursor.getKeys()) {
                    String account = layout.accountOf(key);
                    if (account != null) {
                        accounts.add(account);
                    }
                }
                if (!accounts.isEmpty()) {
                    Set<String> inDatabase = LedgerFigures.existing(c, accounts);
                    accounts.removeIf(inDatabase::contains);
                    compareAll(c, accounts, run);
                }
                if (cursor.isFinished()) {
                    break;
                }
                // The cursor itself, not its number: on a Cluster it also says which primary the scan is on.
                cursor = redis.scan(cursor, args);
            }
            return run;
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + connector.endpoint() + " failed during"
                    + " reconciliation: " + e.getMessage(), e);
        } catch (SQLException e) {
            throw database(e);
        }
    }

    private void compareAll(Connection c, List<String> accounts, Run run) throws SQLException {
        Map<Integer, List<String>> byPartition = new TreeMap<>();
        for (String a : new TreeSet<>(accounts)) {
            byPartition.computeIfAbsent(layout.partition(a), k -> new ArrayList<>()).add(a);
        }
        for (Map.Entry<Integer, List<String>> e : byPartition.entrySet()) {
            int p = e.getKey();
            AccountComparison.Result result = comparison.compare(c, p, e.getValue(), run::tail);
            run.checked += e.getValue().size();
            run.unpersisted += result.unpersisted();
            if (result.markerMissing()) {
                run.withoutMarker.add(p);
            }
            for (ReconciliationReport.Drift d : result.drifted()) {
                run.driftedTotal++;
                if (run.drifted.size() < MAX_REPORTED) {
                    run.drifted.add(d);
                }
                if (run.mode != Mode.CHECK) {
                    repair(c, d, run);
                }
            }
        }
    }

    private void repair(Connection c, ReconciliationReport.Drift d, Run run) throws SQLException {
        // A move the ledger holds half of is in flight on another partition's stream (a merged account's buckets
        // lived there): the drift may be that half, so the account is not drained.
        if (!d.drained() || d.databaseBalance().isEmpty() || !d.balance().isEmpty() // named balances: reported only
                || RecoveryOrder.halfMoves(c, d.account())) {
            if (run.skipped.size() < MAX_REPORTED) {
                run.skipped.add(d);
            }
            return;
        }
        long to = d.databaseBalance().getAsLong();
        RepairReport.Status status = RepairReport.Status.PLANNED;
        if (run.mode == Mode.APPLY) {
            status = await(restore(d.account(), d.redisBalance(), to), "restore account " + d.account());
            log.warn("ledger repair: account {} in Redis {} -> {} from the database: {}", d.account(),
                    d.redisBalance().isPresent() ? d.redisBalance().getAsLong() : "absent", to, status);
        }
        run.repairsTotal++;
        if (run.repairs.size() < MAX_REPORTED) {
            run.repairs.add(new RepairReport.Repair(d.account(), d.redisBalance(), to, status));
        }
    }

    private CompletableFuture<RepairReport.Status> restore(String account, OptionalLong observed, long to) {
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account)};
        return streams.scripts().run(LedgerScripts.RESTORE, keys, account,
                observed.isPresent() ? Long.toString(observed.getAsLong()) : "", Long.toString(to), layout.markerValue())
                .thenApply(reply -> switch (String.valueOf(reply.get(0))) {
                    case "set" -> RepairReport.Status.APPLIED;
                    case "changed" -> RepairReport.Status.CHANGED;
                    case "marker_mismatch", "held_exceeds", "no_marker" -> RepairReport.Status.REFUSED;
                    default -> throw new QuotaException(Reason.PROTOCOL, "unexpected restore reply " + reply + " for " + account);
                });
    }

    // ---- bootstrap ----

    /**
     * Loads every account the database holds and Redis lacks, whole (a page at a time, pipelined), then
     * writes every missing partition marker, then makes the compensations the ledger owed. Idempotent.
     *
     * @throws QuotaException {@link Reason#PARTITIONS_CHANGED} when a marker says another partition
     *         count; {@link Reason#UNAVAILABLE}; {@link Reason#DATABASE}
     */
    public synchronized BootstrapReport bootstrap() {
        return new Bootstrap(layout, dataSource, redis, streams.scripts(), connector.endpoint(), retention, this::quota,
                this::await).run();
    }

    /** The quota service bootstrap makes owed compensations with (no lock), opened on first use. */
    private QuotaService quota() {
        if (quota == null) {
            quota = QuotaServices.over(connector, unlocked);
        }
        return quota;
    }

    // ---- schedule ----

    /**
     * Runs {@link #check()} (or {@link #repair repair(true)} when {@code repair}) every {@code every} on a
     * daemon thread, first at once, and hands each report to {@code onReport}; a failed run is logged
     * and the schedule goes on. Close the returned handle to stop it.
     */
    public AutoCloseable schedule(Duration every, boolean repair, Consumer<ReconciliationReport> onReport) {
        return ReconciliationSchedule.start(every, () -> repair ? repair(true).before() : check(), onReport);
    }

    @Override
    public synchronized void close() {
        if (quota != null) {
            quota.close();
        }
        connector.close();
    }

    private QuotaException database(SQLException e) {
        return new QuotaException(Reason.DATABASE, "the ledger database failed during reconciliation: " + e.getMessage(), e);
    }

    private <T> T await(CompletableFuture<T> f, String what) {
        try {
            return f.get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while waiting for Redis to " + what, e);
        } catch (TimeoutException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + connector.endpoint() + " did not " + what + " in time", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + connector.endpoint() + " failed to " + what + ": "
                    + cause.getMessage(), cause);
        }
    }
}
