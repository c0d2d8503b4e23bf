package dev.warden.quota.ledger;

import dev.warden.quota.EntryKind;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.internal.KeyLayout;
import dev.warden.quota.internal.QuotaConfig;
import dev.warden.quota.internal.Scripts;
import dev.warden.quota.ledger.internal.EntryId;
import dev.warden.quota.ledger.internal.RedisLink;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.Limit;
import io.lettuce.core.Range;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.SetArgs;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.models.stream.PendingMessage;
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
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Compares Redis with the ledger database, repairs Redis from the database, and loads an empty Redis
 * from the database.
 *
 * <p><b>Check.</b> Per account: the Redis balance against the database balance plus the changes of
 * the account's journal entries not yet persisted (pending in the consumer group, or not yet
 * delivered). The figures are taken so that traffic during the check does not show as drift: each
 * chunk of balances is read in one script together with the partition journal's last entry id; the
 * unpersisted entries are read after that, and the database last, in one repeatable-read
 * transaction; entries the database holds beyond the snapshot's last id are taken back out, and
 * unpersisted entries the database holds by then are not counted twice.
 *
 * <p><b>Repair</b> (dry run unless asked): for each drifted account with no entry in flight, sets the
 * Redis balance to the database's (the database wins), with a compare-and-set on the balance seen,
 * so a change landing in between is never overwritten. Accounts only Redis holds are reported, never
 * deleted. No journal entry is written: the ledger already holds the balance.
 *
 * <p><b>Bootstrap</b>: after Redis lost its data, writes every database account that Redis lacks,
 * then every partition's marker (quota-core writes a partition's marker when the first account there is
 * opened, and a partition without one answers DATA_LOST, so bootstrap writes all of them, also for
 * partitions that hold no account). Idempotent: accounts Redis holds are left alone. Run it before
 * letting traffic back in; the journal consumer recreates its consumer groups by itself.
 */
public final class Reconciler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);
    private static final int CHUNK = 500;
    private static final int PAGE = 1000;

    private final QuotaConfig config;
    private final KeyLayout layout;
    private final DataSource dataSource;
    private final String group;
    private final RedisLink link;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final Scripts scripts;
    private final long waitMillis;

    private Reconciler(QuotaConfig config, DataSource dataSource, String group) {
        this.config = config;
        this.layout = new KeyLayout(config.partitions());
        this.dataSource = dataSource;
        this.group = group;
        this.link = RedisLink.create(config);
        try {
            this.connection = link.connect();
        } catch (RuntimeException e) {
            link.close();
            throw e;
        }
        this.redis = connection.sync();
        this.scripts = new Scripts(connection.async());
        this.waitMillis = config.requestTimeout().multipliedBy(3).plusSeconds(1).toMillis();
    }

    /** With the consumer group {@value LedgerConsumer#DEFAULT_GROUP}. */
    public static Reconciler create(Map<String, ?> quotaSettings, DataSource dataSource) {
        return create(quotaSettings, dataSource, LedgerConsumer.DEFAULT_GROUP);
    }

    /**
     * @param quotaSettings the quota service's settings (endpoint, partitions, timeouts)
     * @param group         the journal consumer's group, whose pending entries count as not yet persisted
     * @throws QuotaException {@link Reason#CONFIGURATION}, or {@link Reason#UNAVAILABLE} when Redis cannot be reached
     */
    public static Reconciler create(Map<String, ?> quotaSettings, DataSource dataSource, String group) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(group, "group");
        return new Reconciler(QuotaConfig.from(Objects.requireNonNull(quotaSettings, "quotaSettings")), dataSource, group);
    }

    // ---- check ----

    private record Snapshot(OptionalLong redis, EntryId last) {
    }

    private record Change(String account, EntryKind kind, long delta, long amount, EntryId id) {
    }

    /**
     * Compares every account.
     *
     * @throws QuotaException {@link Reason#UNAVAILABLE} (Redis), {@link Reason#DATABASE}
     */
    public ReconciliationReport check() {
        Instant at = Instant.now();
        try {
            Map<String, Long> dbAccounts = databaseAccounts();
            Map<Integer, Set<String>> accounts = new TreeMap<>();
            for (String a : dbAccounts.keySet()) {
                accounts.computeIfAbsent(layout.partition(a), k -> new TreeSet<>()).add(a);
            }
            for (String a : redisAccounts()) {
                accounts.computeIfAbsent(layout.partition(a), k -> new TreeSet<>()).add(a);
            }
            Map<String, Snapshot> snapshots = new HashMap<>();
            List<Integer> withoutMarker = new ArrayList<>();
            for (int p = 0; p < layout.partitions(); p++) {
                List<String> list = new ArrayList<>(accounts.getOrDefault(p, Set.of()));
                boolean markerMissing = false;
                int from = 0;
                do {
                    List<String> chunk = list.subList(from, Math.min(list.size(), from + CHUNK));
                    List<Object> reply = snapshot(p, chunk);
                    markerMissing |= "no_marker".equals(reply.get(0));
                    EntryId last = EntryId.parse((String) reply.get(1));
                    for (int i = 0; i < chunk.size(); i++) {
                        String b = (String) reply.get(2 + i);
                        snapshots.put(chunk.get(i), new Snapshot(b.isEmpty() ? OptionalLong.empty()
                                : OptionalLong.of(Long.parseLong(b)), last));
                    }
                    from += CHUNK;
                } while (from < list.size());
                if (markerMissing) {
                    withoutMarker.add(p);
                }
            }
            Map<Integer, List<Change>> unpersisted = new HashMap<>();
            Map<Integer, Later> later = new HashMap<>();
            for (int p = 0; p < layout.partitions(); p++) {
                later.put(p, later(p, accounts.getOrDefault(p, Set.of()), snapshots));
                unpersisted.put(p, unpersisted(layout.journal(p)));
            }
            return compare(at, accounts, snapshots, unpersisted, later, withoutMarker);
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + link.endpoint() + " failed during"
                    + " reconciliation: " + e.getMessage(), e);
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "the ledger database failed during reconciliation: "
                    + e.getMessage(), e);
        }
    }

    /**
     * What was appended to a partition's journal after its balances were read: the ids seen beyond the
     * oldest snapshot, and the server time before looking (anything appended later has an id at or
     * past it). Ids are compared only within this epoch of the stream: after Redis lost its data the
     * stream starts again, and the database's older rows are not "later".
     */
    private record Later(Set<EntryId> ids, long fromMs, EntryId window) {

        boolean contains(EntryId id) {
            return ids.contains(id) || Long.compareUnsigned(id.ms(), fromMs) >= 0;
        }
    }

    private Later later(int p, Set<String> accounts, Map<String, Snapshot> snapshots) {
        EntryId oldest = null;
        for (String a : accounts) {
            EntryId l = snapshots.get(a).last();
            oldest = oldest == null || l.compareTo(oldest) < 0 ? l : oldest;
        }
        List<String> time = redis.time();
        long nowMs = Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
        Set<EntryId> ids = new HashSet<>();
        EntryId window = new EntryId(nowMs, 0);
        if (oldest != null) {
            String from = "(" + oldest;
            while (true) {
                List<StreamMessage<String, String>> page = redis.xrange(layout.journal(p), Range.create(from, "+"),
                        Limit.from(PAGE));
                for (StreamMessage<String, String> m : page) {
                    EntryId id = EntryId.parse(m.getId());
                    ids.add(id);
                    window = id.compareTo(window) < 0 ? id : window;
                }
                if (page.size() < PAGE) {
                    break;
                }
                from = "(" + page.get(page.size() - 1).getId();
            }
        }
        return new Later(ids, nowMs, window);
    }

    private ReconciliationReport compare(Instant at, Map<Integer, Set<String>> accounts, Map<String, Snapshot> snapshots,
                                         Map<Integer, List<Change>> unpersisted, Map<Integer, Later> later,
                                         List<Integer> withoutMarker)
            throws SQLException {
        List<ReconciliationReport.Drift> drifted = new ArrayList<>();
        long unpersistedCount = 0;
        long quarantine;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            c.setReadOnly(true);
            c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try {
                Map<String, Long> balances = databaseAccounts(c);
                quarantine = count(c, "SELECT COUNT(*) FROM ledger_quarantine WHERE resolved_at IS NULL");
                int checked = 0;
                for (int p = 0; p < layout.partitions(); p++) {
                    Set<String> here = accounts.getOrDefault(p, Set.of());
                    List<Change> inFlight = unpersisted.get(p);
                    Later appended = later.get(p);
                    EntryId window = appended.window();
                    for (Change ch : inFlight) {
                        window = ch.id().compareTo(window) < 0 ? ch.id() : window;
                    }
                    Set<EntryId> persisted = new HashSet<>();
                    Map<String, List<Change>> afterSnapshot = new HashMap<>();
                    persistedSince(c, layout.journal(p), window, persisted, afterSnapshot, snapshots, appended);
                    Map<String, List<Change>> pendingByAccount = new HashMap<>();
                    for (Change ch : inFlight) {
                        if (!persisted.contains(ch.id())) {
                            unpersistedCount++;
                            pendingByAccount.computeIfAbsent(ch.account(), k -> new ArrayList<>()).add(ch);
                        }
                    }
                    for (String a : here) {
                        checked++;
                        Snapshot s = snapshots.get(a);
                        Long db = balances.get(a);
                        // The database as of the snapshot: take out what it applied beyond the snapshot's last id.
                        boolean exists = db != null;
                        long base = db == null ? 0 : db;
                        List<Change> after = afterSnapshot.getOrDefault(a, List.of());
                        boolean inFlightHere = !after.isEmpty();
                        if (after.stream().anyMatch(ch -> ch.kind() == EntryKind.OPEN)) {
                            exists = false; // opened after the snapshot
                            base = 0;
                        } else {
                            for (Change ch : after) {
                                base -= ch.delta();
                            }
                        }
                        long pendingSum = 0;
                        boolean expectedExists = exists;
                        long expected = base;
                        for (Change ch : pendingByAccount.getOrDefault(a, List.of())) {
                            if (ch.id().compareTo(s.last()) > 0) {
                                continue; // appended after the balance was read
                            }
                            inFlightHere = true;
                            if (ch.kind() == EntryKind.OPEN) {
                                expectedExists = true;
                                expected = ch.amount();
                                pendingSum += ch.amount();
                            } else {
                                expected += ch.delta();
                                pendingSum += ch.delta();
                            }
                        }
                        OptionalLong exp = expectedExists ? OptionalLong.of(expected) : OptionalLong.empty();
                        if (!exp.equals(s.redis())) {
                            drifted.add(new ReconciliationReport.Drift(a, p, s.redis(),
                                    db == null ? OptionalLong.empty() : OptionalLong.of(db), pendingSum, exp,
                                    s.redis().orElse(0) - exp.orElse(0), !inFlightHere));
                        }
                    }
                }
                c.commit();
                drifted.sort((x, y) -> x.account().compareTo(y.account()));
                return new ReconciliationReport(at, checked, drifted, withoutMarker, unpersistedCount, quarantine);
            } finally {
                try {
                    c.rollback();
                    c.setReadOnly(false);
                    c.setAutoCommit(true);
                } catch (SQLException ignored) {
                    // read-only work; the pool resets the connection anyway
                }
            }
        }
    }

    /** Database rows of a stream from {@code window} on: positions (persisted) and, per account, those beyond its snapshot. */
    private void persistedSince(Connection c, String stream, EntryId window, Set<EntryId> persisted,
                                Map<String, List<Change>> afterSnapshot, Map<String, Snapshot> snapshots, Later appended)
            throws SQLException {
        for (String table : List.of("ledger_entries", "ledger_compensations")) {
            try (PreparedStatement ps = c.prepareStatement("SELECT account, kind, amount, entry_ms, entry_seq FROM "
                    + table + " WHERE stream = ? AND entry_ms >= ?")) {
                ps.setString(1, stream);
                ps.setLong(2, window.ms());
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        EntryId id = new EntryId(rs.getLong(4), rs.getLong(5));
                        persisted.add(id);
                        String account = rs.getString(1);
                        Snapshot s = snapshots.get(account);
                        if (s != null && id.compareTo(s.last()) > 0 && appended.contains(id)) {
                            EntryKind kind = EntryKind.fromWireName(rs.getString(2));
                            long amount = rs.getLong(3);
                            afterSnapshot.computeIfAbsent(account, k -> new ArrayList<>()).add(
                                    new Change(account, kind, delta(kind, amount), amount, id));
                        }
                    }
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT entry_ms, entry_seq FROM ledger_quarantine"
                + " WHERE stream = ? AND entry_ms >= ?")) {
            ps.setString(1, stream);
            ps.setLong(2, window.ms());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    persisted.add(new EntryId(rs.getLong(1), rs.getLong(2)));
                }
            }
        }
    }

    /** Entries of a stream not yet acknowledged by the group: pending, or beyond its last delivered id. */
    private List<Change> unpersisted(String stream) {
        String lastDelivered = null;
        boolean groupExists = false;
        try {
            for (Object g : redis.xinfoGroups(stream)) {
                Map<String, Object> info = asMap(g);
                if (group.equals(info.get("name"))) {
                    groupExists = true;
                    lastDelivered = String.valueOf(info.get("last-delivered-id"));
                }
            }
        } catch (RedisCommandExecutionException e) {
            return List.of(); // no such stream
        }
        Set<String> pending = new HashSet<>();
        EntryId start = null;
        if (groupExists) {
            String from = "-";
            while (true) {
                List<PendingMessage> page = redis.xpending(stream, group, Range.create(from, "+"), Limit.from(PAGE));
                for (PendingMessage m : page) {
                    pending.add(m.getId());
                    EntryId id = EntryId.parse(m.getId());
                    start = start == null || id.compareTo(start) < 0 ? id : start;
                }
                if (page.size() < PAGE) {
                    break;
                }
                from = "(" + page.get(page.size() - 1).getId();
            }
        }
        EntryId delivered = groupExists ? EntryId.parse(lastDelivered) : null;
        String from = start != null ? start.toString() : delivered != null ? "(" + delivered : "-";
        List<Change> changes = new ArrayList<>();
        while (true) {
            List<StreamMessage<String, String>> page = redis.xrange(stream, Range.create(from, "+"), Limit.from(PAGE));
            for (StreamMessage<String, String> m : page) {
                EntryId id = EntryId.parse(m.getId());
                boolean undelivered = delivered == null || id.compareTo(delivered) > 0;
                if (undelivered || pending.contains(m.getId())) {
                    Change ch = change(m, id);
                    if (ch != null) {
                        changes.add(ch);
                    }
                }
            }
            if (page.size() < PAGE) {
                break;
            }
            from = "(" + page.get(page.size() - 1).getId();
        }
        return changes;
    }

    private static Change change(StreamMessage<String, String> m, EntryId id) {
        try {
            Map<String, String> f = m.getBody();
            EntryKind kind = EntryKind.fromWireName(f.get("kind"));
            long amount = Long.parseLong(f.get("amount"));
            return new Change(f.get("account"), kind, delta(kind, amount), amount, id);
        } catch (RuntimeException e) {
            return null; // malformed: the consumer quarantines it
        }
    }

    private static long delta(EntryKind kind, long amount) {
        return switch (kind) {
            case OPEN -> 0;
            case DEDUCT -> -amount;
            case TOPUP, REFUND -> amount;
        };
    }

    private List<Object> snapshot(int p, List<String> accounts) {
        String[] keys = new String[2 + accounts.size()];
        String[] args = new String[1 + accounts.size()];
        keys[0] = layout.marker(p);
        keys[1] = layout.journal(p);
        args[0] = layout.markerValue();
        for (int i = 0; i < accounts.size(); i++) {
            keys[2 + i] = layout.accountKey(accounts.get(i));
            args[1 + i] = accounts.get(i);
        }
        List<Object> reply = await(scripts.run(connection.async(), Scripts.Script.LEDGER_SNAPSHOT, keys, args),
                "read partition " + p);
        if (reply.isEmpty() || "invalid_argument".equals(reply.get(0))) {
            throw new QuotaException(Reason.PROTOCOL, "unexpected snapshot reply " + reply);
        }
        return reply;
    }

    private Set<String> redisAccounts() {
        Set<String> result = new HashSet<>();
        ScanArgs args = ScanArgs.Builder.matches("quota:{p*}:acct:*").limit(1000);
        KeyScanCursor<String> cursor = redis.scan(args);
        while (true) {
            for (String key : cursor.getKeys()) {
                int at = key.indexOf("}:acct:");
                if (at > 0) {
                    String account = key.substring(at + "}:acct:".length());
                    if (key.equals(layout.accountKey(account))) {
                        result.add(account);
                    }
                }
            }
            if (cursor.isFinished()) {
                return result;
            }
            cursor = redis.scan(ScanCursor.of(cursor.getCursor()), args);
        }
    }

    private Map<String, Long> databaseAccounts() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return databaseAccounts(c);
        }
    }

    private static Map<String, Long> databaseAccounts(Connection c) throws SQLException {
        Map<String, Long> balances = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT account, balance FROM ledger_accounts");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                balances.put(rs.getString(1), rs.getLong(2));
            }
        }
        return balances;
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    // ---- repair ----

    /**
     * Rewrites Redis from the database for drifted accounts with no entry in flight.
     *
     * @param apply false for a dry run (the default of the CLI): nothing is written
     */
    public RepairReport repair(boolean apply) {
        ReconciliationReport report = check();
        List<RepairReport.Repair> repairs = new ArrayList<>();
        List<ReconciliationReport.Drift> skipped = new ArrayList<>();
        for (ReconciliationReport.Drift d : report.drifted()) {
            if (!d.drained() || d.databaseBalance().isEmpty()) {
                skipped.add(d);
                continue;
            }
            long to = d.databaseBalance().getAsLong();
            if (!apply) {
                repairs.add(new RepairReport.Repair(d.account(), d.redisBalance(), to, RepairReport.Status.PLANNED));
                continue;
            }
            RepairReport.Status status = restore(d.account(), d.redisBalance(), to, true);
            log.warn("ledger repair: account {} in Redis {} -> {} from the database: {}", d.account(),
                    d.redisBalance().isPresent() ? d.redisBalance().getAsLong() : "absent", to, status);
            repairs.add(new RepairReport.Repair(d.account(), d.redisBalance(), to, status));
        }
        return new RepairReport(apply, repairs, skipped, report);
    }

    private RepairReport.Status restore(String account, OptionalLong observed, long to, boolean writeMarker) {
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account)};
        List<Object> reply;
        try {
            reply = await(scripts.run(connection.async(), Scripts.Script.LEDGER_RESTORE, keys, account,
                    observed.isPresent() ? Long.toString(observed.getAsLong()) : "", Long.toString(to),
                    layout.markerValue(), writeMarker ? "1" : "0"), "restore account " + account);
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + link.endpoint() + " failed restoring account "
                    + account + ": " + e.getMessage(), e);
        }
        return switch (String.valueOf(reply.get(0))) {
            case "set" -> RepairReport.Status.APPLIED;
            case "changed" -> RepairReport.Status.CHANGED;
            case "marker_mismatch" -> RepairReport.Status.REFUSED;
            default -> throw new QuotaException(Reason.PROTOCOL, "unexpected restore reply " + reply + " for " + account);
        };
    }

    // ---- bootstrap ----

    /**
     * Loads every account the database holds and Redis lacks, then writes every missing partition
     * marker. Idempotent.
     *
     * @throws QuotaException {@link Reason#PARTITIONS_CHANGED} when a marker says another partition
     *         count; {@link Reason#UNAVAILABLE}; {@link Reason#DATABASE}
     */
    public BootstrapReport bootstrap() {
        Map<String, Long> accounts;
        try {
            accounts = databaseAccounts();
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's accounts: " + e.getMessage(), e);
        }
        int loaded = 0;
        int present = 0;
        for (Map.Entry<String, Long> e : accounts.entrySet()) {
            RepairReport.Status s = restore(e.getKey(), OptionalLong.empty(), e.getValue(), false);
            switch (s) {
                case APPLIED -> loaded++;
                case CHANGED -> present++;
                default -> throw new QuotaException(Reason.PARTITIONS_CHANGED, "partition marker "
                        + layout.markerOf(e.getKey()) + " was written for another partition count");
            }
        }
        int markers = 0;
        try {
            for (int p = 0; p < layout.partitions(); p++) {
                String ok = redis.set(layout.marker(p), layout.markerValue(), SetArgs.Builder.nx());
                if ("OK".equals(ok)) {
                    markers++;
                } else {
                    String value = redis.get(layout.marker(p));
                    if (value != null && !value.equals(layout.markerValue())) {
                        throw new QuotaException(Reason.PARTITIONS_CHANGED, "partition marker " + layout.marker(p)
                                + " says '" + value + "', not '" + layout.markerValue() + "'");
                    }
                }
            }
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + link.endpoint() + " failed writing partition"
                    + " markers: " + e.getMessage(), e);
        }
        log.warn("ledger bootstrap: {} accounts loaded into Redis from the database, {} already there, {} partition"
                + " markers written", loaded, present, markers);
        return new BootstrapReport(loaded, present, markers);
    }

    // ---- schedule ----

    /**
     * Runs {@link #check()} (or {@link #repair repair(true)} when {@code repair}) every {@code every} on a
     * daemon thread, first at once, and hands each report to {@code onReport}; a failed run is logged
     * and the schedule goes on. Close the returned handle to stop it.
     */
    public AutoCloseable schedule(Duration every, boolean repair, Consumer<ReconciliationReport> onReport) {
        Objects.requireNonNull(every, "every");
        Objects.requireNonNull(onReport, "onReport");
        if (every.isNegative() || every.isZero()) {
            throw new IllegalArgumentException("every must be positive, was " + every);
        }
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "warden-reconciliation");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(() -> {
            try {
                ReconciliationReport report = repair ? repair(true).before() : check();
                if (!report.clean()) {
                    log.warn("{}", report);
                }
                onReport.accept(report);
            } catch (RuntimeException e) {
                log.error("scheduled reconciliation failed", e);
            }
        }, 0, every.toNanos(), TimeUnit.NANOSECONDS);
        return () -> {
            timer.shutdownNow();
            try {
                timer.awaitTermination(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
    }

    @Override
    public void close() {
        link.close();
    }

    private <T> T await(java.util.concurrent.CompletableFuture<T> f, String what) {
        try {
            return f.get(waitMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while waiting for Redis to " + what, e);
        } catch (TimeoutException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + link.endpoint() + " did not " + what + " in time", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RedisException r) {
                throw r;
            }
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + link.endpoint() + " failed to " + what + ": "
                    + cause.getMessage(), cause);
        }
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
}
