package dev.warden.quota.ledger.internal.reconcile;

import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.journal.LedgerScripts;
import dev.warden.quota.ledger.internal.store.CompensationRows;
import dev.warden.quota.ledger.reconcile.BootstrapReport;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.ScriptRunner;
import io.lettuce.core.RedisException;
import io.lettuce.core.SetArgs;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * One {@link dev.warden.quota.ledger.Reconciler#bootstrap()}: reloads Redis from the database after Redis lost its data. Each
 * account Redis lacks comes back whole, a page at a time, pipelined: its available and held quota, its
 * open holds (with their expiry), its fence mark and its named balances. Then every partition's marker,
 * so no traffic reaches a partition before its accounts are back. Then the compensations the ledger
 * owed when Redis went away (a replay it had applied and not yet undone in Redis): made now, under
 * their own request ids. Confined to the calling thread; the reconciler lends it its connection, its
 * scripts and a quota service for the compensations.
 */
public final class Bootstrap {

    private static final Logger log = LoggerFactory.getLogger(Pages.RECONCILER_LOG);

    private final KeyLayout layout;
    private final DataSource dataSource;
    private final RedisClusterCommands<String, String> redis;
    private final ScriptRunner scripts;
    private final String endpoint;
    private final Supplier<QuotaService> quota;
    private final java.time.Duration retention;
    private final BiFunction<CompletableFuture<List<Object>>, String, List<Object>> await;

    public Bootstrap(KeyLayout layout, DataSource dataSource, RedisClusterCommands<String, String> redis, ScriptRunner scripts,
              String endpoint, java.time.Duration retention, Supplier<QuotaService> quota,
              BiFunction<CompletableFuture<List<Object>>, String, List<Object>> await) {
        this.layout = layout;
        this.dataSource = dataSource;
        this.redis = redis;
        this.scripts = scripts;
        this.endpoint = endpoint;
        this.quota = quota;
        this.retention = retention;
        this.await = await;
    }

    /** One account as the ledger holds it. */
    private record Row(String account, long available, long held, Long fence, List<long[]> holdFigures, List<String> holdIds) {
    }

    public BootstrapReport run() {
        int loaded = 0;
        int present = 0;
        int balances = 0;
        int holds = 0;
        int moves = 0;
        Set<Integer> unmarked = unmarkedPartitions();
        try (Connection c = dataSource.getConnection()) {
            String after = "";
            while (true) {
                Map<String, Row> page = page(c, after);
                if (page.isEmpty()) {
                    break;
                }
                Map<String, CompletableFuture<List<Object>>> calls = new LinkedHashMap<>();
                page.values().forEach(row -> calls.put(row.account(), load(row)));
                Set<String> loadedHere = new HashSet<>();
                for (Map.Entry<String, CompletableFuture<List<Object>>> e : calls.entrySet()) {
                    List<Object> reply = await.apply(e.getValue(), "load account " + e.getKey());
                    switch (String.valueOf(reply.get(0))) {
                        case "loaded" -> {
                            loaded++;
                            holds += page.get(e.getKey()).holdIds().size();
                            loadedHere.add(e.getKey());
                        }
                        case "present" -> {
                            present++;
                            // Present in a partition still without its marker: a bootstrap that stopped before
                            // its markers loaded it, and perhaps not its named balances.
                            if (unmarked.contains(layout.partition(e.getKey()))) {
                                loadedHere.add(e.getKey());
                            }
                        }
                        case "marker_mismatch" -> throw new QuotaException(Reason.PARTITIONS_CHANGED, "partition marker "
                                + layout.markerOf(e.getKey()) + " was written for another partition count");
                        default -> throw new QuotaException(Reason.PROTOCOL, "unexpected load reply " + reply + " for "
                                + e.getKey());
                    }
                }
                String last = new ArrayList<>(page.keySet()).get(page.size() - 1);
                balances += loadBalances(c, after, last, loadedHere);
                moves += settleMoves(c, after, last, loadedHere);
                after = last;
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's accounts: " + e.getMessage(), e);
        }
        int markers = writeMarkers();
        int compensations = owedCompensations();
        log.warn("ledger bootstrap: {} accounts loaded into Redis from the database ({} open holds, {} named balances,"
                + " {} half moves completed), {} already there, {} partition markers written, {} owed compensations made",
                loaded, holds, balances, moves, present, markers, compensations);
        return new BootstrapReport(loaded, present, markers, balances, holds, compensations, moves);
    }

    /** The accounts after {@code after}, a page, with their open holds. */
    private Map<String, Row> page(Connection c, String after) throws SQLException {
        Map<String, Row> page = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT account, balance, held, fence FROM ledger_accounts"
                + " WHERE account > ? ORDER BY account LIMIT " + Pages.ACCOUNTS)) {
            ps.setString(1, after);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long fence = rs.getLong(4);
                    Long mark = rs.wasNull() ? null : fence;
                    page.put(rs.getString(1), new Row(rs.getString(1), rs.getLong(2), rs.getLong(3), mark,
                            new ArrayList<>(), new ArrayList<>()));
                }
            }
        }
        if (page.isEmpty()) {
            return page;
        }
        String last = new ArrayList<>(page.keySet()).get(page.size() - 1);
        long now = System.currentTimeMillis();
        try (PreparedStatement ps = c.prepareStatement("SELECT account, hold_id, amount, expires_ms FROM ledger_holds"
                + " WHERE account > ? AND account <= ? ORDER BY account, hold_id")) {
            ps.setString(1, after);
            ps.setString(2, last);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Row row = page.get(rs.getString(1));
                    long expires = rs.getLong(4);
                    if (rs.wasNull()) {
                        expires = now; // journaled before holds carried their expiry: due, so the next sweep frees it
                    }
                    if (row != null) {
                        row.holdIds().add(rs.getString(2));
                        row.holdFigures().add(new long[]{rs.getLong(3), expires});
                    }
                }
            }
        }
        return page;
    }

    /**
     * Loads one account whole. What is held is what its open holds hold; should the ledger's held figure
     * say more (a hold the ledger cannot name), the rest is loaded as available, so nothing is held that no
     * hold can return, and reconciliation reports the difference in held quota.
     */
    private CompletableFuture<List<Object>> load(Row row) {
        int p = layout.partition(row.account());
        long heldByHolds = row.holdFigures().stream().mapToLong(h -> h[0]).sum();
        long available = row.available() + Math.max(0, row.held() - heldByHolds);
        List<String> keys = new ArrayList<>(List.of(layout.marker(p), layout.accountKey(row.account()), layout.holdIndex(p)));
        List<String> args = new ArrayList<>(List.of(row.account(), Long.toString(available), Long.toString(heldByHolds),
                row.fence() == null ? "-" : Long.toString(row.fence()), layout.markerValue()));
        for (int i = 0; i < row.holdIds().size(); i++) {
            keys.add(layout.holdKey(row.account(), row.holdIds().get(i)));
            args.add(row.holdIds().get(i));
            args.add(Long.toString(row.holdFigures().get(i)[0]));
            args.add(Long.toString(row.holdFigures().get(i)[1]));
        }
        return scripts.run(LedgerScripts.LOAD, keys.toArray(String[]::new), args.toArray(String[]::new));
    }

    /** Every missing partition marker, last: until then no traffic reaches a partition being loaded. */
    private int writeMarkers() {
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
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " failed writing partition"
                    + " markers: " + e.getMessage(), e);
        }
        return markers;
    }

    /**
     * The compensations the ledger recorded and had not yet made in Redis (outcome still empty): a replay it
     * applied, whose undoing in Redis was lost with Redis. Loaded from the ledger, Redis holds the replay now,
     * so each is made now under its recorded request id (idempotent: one a consumer makes too is a duplicate).
     */
    private int owedCompensations() {
        List<Object[]> owed = new ArrayList<>();
        // An outcome is recorded after Redis answered, best effort: a compensation whose own entry the ledger holds was
        // made (its outcome was lost with a crash), and Redis's loaded balance includes it already.
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("SELECT stream, entry_ms,"
                + " entry_seq, account, amount, compensation_request_id, compensation_kind, EXISTS (SELECT 1 FROM ledger_entries e"
                + " WHERE e.account = ledger_compensations.account AND e.request_id = ledger_compensations.compensation_request_id)"
                + " FROM ledger_compensations WHERE outcome IS NULL AND resolved_at IS NULL ORDER BY entry_ms, entry_seq");
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                owed.add(new Object[]{rs.getString(1), new EntryId(rs.getLong(2), rs.getLong(3)), rs.getString(4),
                        rs.getLong(5), rs.getString(6), rs.getString(7), rs.getBoolean(8)});
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's compensations: " + e.getMessage(), e);
        }
        int made = 0;
        for (Object[] o : owed) {
            String account = (String) o[2];
            long amount = (Long) o[3];
            String requestId = (String) o[4];
            if ((Boolean) o[6]) {
                record((String) o[0], (EntryId) o[1], "APPLIED", requestId); // made before, and in the ledger
                continue;
            }
            Outcome outcome = EntryKind.fromWireName((String) o[5]) == EntryKind.REFUND
                    ? quota.get().refund(account, amount, requestId) : quota.get().deduct(account, amount, requestId);
            if (outcome.isApplied()) {
                made++;
            } else {
                log.error("ledger bootstrap: the owed compensation {} of account {} was refused ({}); it stays unresolved"
                        + " until a person resolves it", requestId, account, outcome);
            }
            record((String) o[0], (EntryId) o[1], outcome.status().name(), requestId);
        }
        return made;
    }

    private void record(String stream, EntryId position, String outcome, String requestId) {
        try (Connection c = dataSource.getConnection()) {
            CompensationRows.recordOutcome(c, stream, position, outcome);
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not record compensation " + requestId + ": " + e.getMessage(), e);
        }
    }

    /**
     * Moves between the buckets of a split account that the ledger holds half of, for the accounts of
     * {@code (after, last]} just loaded: Redis lost the other half with its data (an account Redis still held
     * may have it in flight, so those are left alone). Each is completed on the account key and journaled
     * under the move's id; the number completed.
     */
    private int settleMoves(Connection c, String after, String last, Set<String> loaded) throws SQLException {
        if (loaded.isEmpty()) {
            return 0;
        }
        List<String[]> halves = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT e.account, e.kind, e.request_id, e.amount FROM ledger_entries e"
                + " WHERE e.account > ? AND e.account <= ? AND e.kind IN ('moveout', 'movein') AND NOT EXISTS ("
                + "SELECT 1 FROM ledger_entries x WHERE x.account = e.account AND x.request_id ="
                + " CASE WHEN e.kind = 'moveout' THEN 'movein:' ELSE 'moveout:' END"
                + " || SUBSTRING(e.request_id FROM POSITION(':' IN e.request_id) + 1))"
                + " ORDER BY e.account, e.entry_ms, e.entry_seq")) {
            ps.setString(1, after);
            ps.setString(2, last);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    if (loaded.contains(rs.getString(1))) {
                        String key = rs.getString(3);
                        halves.add(new String[]{rs.getString(1), rs.getString(2).equals("moveout") ? "movein" : "moveout",
                                key.substring(key.indexOf(':') + 1), Long.toString(rs.getLong(4))});
                    }
                }
            }
        }
        int settled = 0;
        for (String[] h : halves) {
            int p = layout.partition(h[0]);
            List<Object> reply = await.apply(scripts.run(LedgerScripts.SETTLE_MOVE, new String[]{layout.marker(p),
                    layout.accountKey(h[0]), layout.journal(p), layout.movedKey(h[0], 0, h[2])}, h[0], h[1], h[2], h[3],
                    layout.markerValue(), Long.toString(retention.toMillis())), "complete move " + h[2] + " of account " + h[0]);
            if ("settled".equals(String.valueOf(reply.get(0)))) {
                settled++;
            } else {
                log.error("ledger bootstrap: could not complete move {} of account {} ({} {}): {}; reconciliation reports"
                        + " the difference", h[2], h[0], h[1], h[3], reply);
            }
        }
        return settled;
    }

    /** The partitions without a marker: no traffic runs there (DATA_LOST) until bootstrap writes it. */
    private Set<Integer> unmarkedPartitions() {
        Set<Integer> unmarked = new HashSet<>();
        try {
            for (int p = 0; p < layout.partitions(); p++) {
                if (redis.get(layout.marker(p)) == null) {
                    unmarked.add(p);
                }
            }
        } catch (RedisException e) {
            throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " failed reading partition"
                    + " markers: " + e.getMessage(), e);
        }
        return unmarked;
    }

    /**
     * Writes the named balances the database holds for the accounts of {@code (after, last]} that were
     * just loaded (or loaded by a bootstrap that stopped before writing the markers), never over a balance
     * Redis has (HSETNX); the number written. Runs before the partition markers exist, so no posting can
     * touch these accounts meanwhile.
     */
    private int loadBalances(Connection c, String after, String last, Set<String> loaded) throws SQLException {
        if (loaded.isEmpty()) {
            return 0;
        }
        int written = 0;
        try (PreparedStatement ps = c.prepareStatement("SELECT account, name, amount FROM ledger_balances"
                + " WHERE account > ? AND account <= ? ORDER BY account, name")) {
            ps.setString(1, after);
            ps.setString(2, last);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String account = rs.getString(1);
                    if (!loaded.contains(account)) {
                        continue;
                    }
                    try {
                        if (Boolean.TRUE.equals(redis.hsetnx(layout.balancesKey(account), rs.getString(2),
                                Long.toString(rs.getLong(3))))) {
                            written++;
                        }
                    } catch (RedisException e) {
                        throw new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " failed loading the"
                                + " named balances of account " + account + ": " + e.getMessage(), e);
                    }
                }
            }
        }
        return written;
    }
}
