package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.store.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A batch's statements: the lookups it makes and the writes it does, per dialect, for the entries of
 * one partition's stream or of several. On PostgreSQL the batch-sized ones are one fixed statement
 * over arrays ({@code unnest}), planned once whatever the batch size; on H2, multi-row statements and
 * JDBC batches. The entries themselves are {@link EntryRows}', account rows and holds {@link AccountRows}',
 * compensations {@link CompensationRows}'; what to write, and when, is the consumer's batch writer's.
 */
public final class LedgerSql {

    /**
     * The highest fencing token, NULL for none. Written without relying on GREATEST's NULL rule, which differs:
     * PostgreSQL ignores NULL arguments, H2 (in its default mode) answers NULL.
     */
    private static final String HIGHER_FENCE = "NULLIF(GREATEST(COALESCE(fence, -1), COALESCE(CAST(? AS BIGINT), -1)), -1)";
    private static final String UPDATE_BALANCE = "UPDATE ledger_accounts SET balance = balance + ?, held = held + ?,"
            + " fence = " + HIGHER_FENCE + ", updated_at = CURRENT_TIMESTAMP WHERE account = ?";
    private static final String INSERT_QUARANTINE = "INSERT INTO ledger_quarantine (stream, entry_id, entry_ms,"
            + " entry_seq, account, kind, amount, request_id, balance_after, fields, reason, detail)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    /** Pairs per key lookup, rows per multi-row insert, accounts per balance update: well under 32767 parameters. */
    private static final int CHUNK = 1000;

    /** Where the ledger holds an entry: its stream and its id there. */
    public record Position(String stream, EntryId id) {
    }

    private final Dialect dialect;

    public LedgerSql(Dialect dialect) {
        this.dialect = dialect;
    }

    // ---- lookups ----

    /** The entries the ledger holds under these keys, and where. */
    public Map<JournalEntry.Key, Position> knownKeys(Connection c, List<JournalEntry.Key> keys) throws SQLException {
        Map<JournalEntry.Key, Position> known = new HashMap<>();
        if (dialect == Dialect.POSTGRESQL) {
            // Two arrays, one fixed statement: planned once, an index probe per key.
            try (PreparedStatement ps = c.prepareStatement("SELECT e.account, e.request_id, e.stream, e.entry_ms, e.entry_seq"
                    + " FROM ledger_entries e JOIN unnest(?::varchar[], ?::varchar[]) AS k(account, request_id)"
                    + " ON e.account = k.account AND e.request_id = k.request_id")) {
                ps.setArray(1, c.createArrayOf("varchar", keys.stream().map(JournalEntry.Key::account).toArray()));
                ps.setArray(2, c.createArrayOf("varchar", keys.stream().map(JournalEntry.Key::requestId).toArray()));
                readKnown(ps, known);
            }
            return known;
        }
        for (int from = 0; from < keys.size(); from += CHUNK) {
            List<JournalEntry.Key> chunk = keys.subList(from, Math.min(keys.size(), from + CHUNK));
            String sql = "SELECT account, request_id, stream, entry_ms, entry_seq FROM ledger_entries WHERE"
                    + " (account, request_id) IN (" + "(?, ?), ".repeat(chunk.size() - 1) + "(?, ?))";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int i = 1;
                for (JournalEntry.Key k : chunk) {
                    ps.setString(i++, k.account());
                    ps.setString(i++, k.requestId());
                }
                readKnown(ps, known);
            }
        }
        return known;
    }

    private static void readKnown(PreparedStatement ps, Map<JournalEntry.Key, Position> known) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                known.put(new JournalEntry.Key(rs.getString(1), rs.getString(2)),
                        new Position(rs.getString(3), new EntryId(rs.getLong(4), rs.getLong(5))));
            }
        }
    }

    /**
     * Positions in these streams, between the entry times {@code min} and {@code max}, already recorded
     * as compensated or quarantined (an earlier attempt that was not acknowledged).
     */
    public void positions(Connection c, Set<String> streams, long min, long max, Set<Position> compensated,
                   Set<Position> quarantined) throws SQLException {
        String in = "?, ".repeat(streams.size() - 1) + "?";
        try (PreparedStatement ps = c.prepareStatement("SELECT 'c', stream, entry_ms, entry_seq FROM ledger_compensations"
                + " WHERE stream IN (" + in + ") AND entry_ms BETWEEN ? AND ? UNION ALL SELECT 'q', stream, entry_ms,"
                + " entry_seq FROM ledger_quarantine WHERE stream IN (" + in + ") AND entry_ms BETWEEN ? AND ?")) {
            int i = 1;
            for (int half = 0; half < 2; half++) {
                for (String stream : streams) {
                    ps.setString(i++, stream);
                }
                ps.setLong(i++, min);
                ps.setLong(i++, max);
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    Position p = new Position(rs.getString(2), new EntryId(rs.getLong(3), rs.getLong(4)));
                    (rs.getString(1).equals("c") ? compensated : quarantined).add(p);
                }
            }
        }
    }

    // ---- a batch's writes ----

    /**
     * One update per account with its net change in the batch, refused for an account whose balance or held
     * quota would pass below zero at some entry ({@link NetChanges}); false when an account is unknown or
     * so refused (the entry-by-entry replay then finds the entry).
     */
    public boolean applyNets(Connection c, NetChanges nets) throws SQLException {
        if (nets.isEmpty()) {
            return true;
        }
        if (dialect == Dialect.POSTGRESQL) {
            int n = nets.size();
            Object[] accounts = new Object[n], deltas = new Object[n], held = new Object[n], fences = new Object[n],
                    floors = new Object[n], heldFloors = new Object[n];
            int i = 0;
            for (Map.Entry<String, NetChanges.Net> e : nets.byAccount().entrySet()) {
                NetChanges.Net net = e.getValue();
                accounts[i] = e.getKey();
                deltas[i] = net.available();
                held[i] = net.held();
                fences[i] = net.fence() < 0 ? null : net.fence();
                floors[i] = net.availableFloor();
                heldFloors[i] = net.heldFloor();
                i++;
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE ledger_accounts AS a SET balance = a.balance + d.delta,"
                    + " held = a.held + d.held, fence = NULLIF(GREATEST(COALESCE(a.fence, -1), COALESCE(d.fence, -1)), -1),"
                    + " updated_at = CURRENT_TIMESTAMP FROM unnest(?::varchar[], ?::bigint[], ?::bigint[], ?::bigint[],"
                    + " ?::bigint[], ?::bigint[]) AS d(account, delta, held, fence, floor, held_floor)"
                    + " WHERE a.account = d.account AND a.balance + d.floor >= 0 AND a.held + d.held_floor >= 0")) {
                SqlArrays.bind(c, ps, new String[]{"varchar", "bigint", "bigint", "bigint", "bigint", "bigint"}, accounts, deltas,
                        held, fences, floors, heldFloors);
                return ps.executeUpdate() == n;
            }
        }
        try (PreparedStatement ps = c.prepareStatement(UPDATE_BALANCE + " AND balance + ? >= 0 AND held + ? >= 0")) {
            for (Map.Entry<String, NetChanges.Net> e : nets.byAccount().entrySet()) {
                NetChanges.Net net = e.getValue();
                ps.setLong(1, net.available());
                ps.setLong(2, net.held());
                if (net.fence() < 0) {
                    ps.setNull(3, Types.BIGINT);
                } else {
                    ps.setLong(3, net.fence());
                }
                ps.setString(4, e.getKey());
                ps.setLong(5, net.availableFloor());
                ps.setLong(6, net.heldFloor());
                ps.addBatch();
            }
            for (int count : ps.executeBatch()) {
                if (count == 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Quarantined entries: a JDBC batch (they are rare). */
    public void insertQuarantine(Connection c, List<QuarantineRow> rows) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(INSERT_QUARANTINE)) {
            for (QuarantineRow r : rows) {
                bindQuarantine(ps, r);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    // ---- one entry at a time (the slow path, under a savepoint each) ----

    /** False when the account is unknown. */
    public boolean updateBalance(Connection c, JournalEntry e) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(UPDATE_BALANCE)) {
            bindBalance(ps, e);
            return ps.executeUpdate() > 0;
        }
    }

    /**
     * Applies postings' lines to the named balances (one update per (account, balance), in key order; a
     * balance without a row gets one) and records the lines. A debit beyond a balance fails its CHECK; false
     * when a balance would pass below zero at some posting and come back by the last (the entry-by-entry
     * replay then finds the posting), which the CHECK on the sum cannot see.
     */
    public boolean applyPostings(Connection c, List<JournalEntry> postings) throws SQLException {
        if (postings.isEmpty()) {
            return true;
        }
        // Per (account, balance): {the sum, the lowest the running sum reaches (at most 0)}.
        Map<List<String>, long[]> sums = new java.util.TreeMap<>(java.util.Comparator
                .comparing((List<String> k) -> k.get(0)).thenComparing(k -> k.get(1)));
        for (JournalEntry e : postings) {
            for (Map.Entry<String, Long> line : e.lines().entrySet()) {
                long[] sum = sums.computeIfAbsent(List.of(e.account(), line.getKey()), k -> new long[2]);
                sum[0] = Math.addExact(sum[0], line.getValue());
                sum[1] = Math.min(sum[1], sum[0]);
            }
        }
        try (PreparedStatement update = c.prepareStatement("UPDATE ledger_balances SET amount = amount + ?,"
                + " updated_at = CURRENT_TIMESTAMP WHERE account = ? AND name = ? AND amount + ? >= 0");
             PreparedStatement insert = c.prepareStatement("INSERT INTO ledger_balances (account, name, amount)"
                     + " VALUES (?, ?, ?)")) {
            for (Map.Entry<List<String>, long[]> s : sums.entrySet()) {
                long sum = s.getValue()[0];
                long lowest = s.getValue()[1];
                // Only a dip below the sum needs the guard; otherwise the CHECK refuses what it must, as before.
                boolean dips = lowest < Math.min(0, sum);
                update.setLong(1, sum);
                update.setString(2, s.getKey().get(0));
                update.setString(3, s.getKey().get(1));
                update.setLong(4, dips ? lowest : 0); // every stored amount is at least 0
                if (update.executeUpdate() == 0) {
                    if (dips) {
                        return false;
                    }
                    insert.setString(1, s.getKey().get(0));
                    insert.setString(2, s.getKey().get(1));
                    insert.setLong(3, sum);
                    insert.executeUpdate();
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger_posting_lines (account, request_id, name, delta)"
                + " VALUES (?, ?, ?, ?)")) {
            for (JournalEntry e : postings) {
                for (Map.Entry<String, Long> line : e.lines().entrySet()) {
                    ps.setString(1, e.account());
                    ps.setString(2, e.requestId());
                    ps.setString(3, line.getKey());
                    ps.setLong(4, line.getValue());
                    ps.addBatch();
                }
            }
            ps.executeBatch();
        }
        return true;
    }

    // ---- binding ----

    static void bindBalance(PreparedStatement ps, JournalEntry e) throws SQLException {
        ps.setLong(1, e.delta());
        ps.setLong(2, e.heldDelta());
        if (e.kind() == dev.warden.quota.EntryKind.DEDUCT && e.token().isPresent()) {
            ps.setLong(3, e.token().getAsLong());
        } else {
            ps.setNull(3, Types.BIGINT);
        }
        ps.setString(4, e.account());
    }

    static void bindQuarantine(PreparedStatement ps, QuarantineRow r) throws SQLException {
        Map<String, String> f = r.fields();
        ps.setString(1, r.stream());
        ps.setString(2, r.entryId());
        ps.setLong(3, r.position().ms());
        ps.setLong(4, r.position().seq());
        ps.setString(5, f.get(JournalEntry.ACCOUNT));
        ps.setString(6, f.get(JournalEntry.KIND));
        setLongOrNull(ps, 7, f.get(JournalEntry.AMOUNT));
        ps.setString(8, f.get(JournalEntry.REQUEST));
        setLongOrNull(ps, 9, f.get(JournalEntry.BALANCE));
        ps.setString(10, FieldsCodec.encode(f));
        ps.setString(11, r.reason().name());
        ps.setString(12, r.detail());
    }

    private static void setLongOrNull(PreparedStatement ps, int index, String text) throws SQLException {
        try {
            ps.setLong(index, Long.parseLong(text));
        } catch (NumberFormatException | NullPointerException e) {
            ps.setNull(index, Types.BIGINT);
        }
    }
}
