package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.journal.JournalEntry;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;

/**
 * The SQL of {@code ledger_compensations}: a replay the ledger applied and Redis must undo is recorded
 * in the batch's transaction (so the undo is owed even if the consumer dies before it), and Redis's
 * answer is recorded once the undo ran.
 */
public final class CompensationRows {

    private static final String INSERT_COMPENSATION = "INSERT INTO ledger_compensations (stream, entry_id, entry_ms,"
            + " entry_seq, request_id, account, kind, amount, balance_after, token, compensation_request_id,"
            + " compensation_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

    private CompensationRows() {
    }

    /** The batch's replays to compensate: one JDBC batch (they are rare). */
    public static void insertAll(Connection c, List<CompensationRow> rows) throws SQLException {
        if (rows.isEmpty()) {
            return;
        }
        try (PreparedStatement ps = c.prepareStatement(INSERT_COMPENSATION)) {
            for (CompensationRow r : rows) {
                bind(ps, r);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** One replay to compensate (the slow path, under the entry's savepoint). */
    public static void insert(Connection c, CompensationRow r) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT_COMPENSATION)) {
            bind(ps, r);
            ps.executeUpdate();
        }
    }

    private static void bind(PreparedStatement ps, CompensationRow r) throws SQLException {
        JournalEntry e = r.entry();
        ps.setString(1, e.stream());
        ps.setString(2, e.entryId());
        ps.setLong(3, r.position().ms());
        ps.setLong(4, r.position().seq());
        ps.setString(5, e.requestId());
        ps.setString(6, e.account());
        ps.setString(7, e.kind().wireName());
        ps.setLong(8, e.amount());
        ps.setLong(9, e.balanceAfter());
        if (e.token().isPresent()) {
            ps.setLong(10, e.token().getAsLong());
        } else {
            ps.setNull(10, Types.BIGINT);
        }
        ps.setString(11, r.requestId());
        ps.setString(12, r.kind().wireName());
    }

    /** Records Redis's answer to a compensation; best effort (the compensation's own journal entry is the durable record). */
    public static void recordOutcome(Connection c, String stream, EntryId position, String outcome) throws SQLException {
        c.setAutoCommit(true);
        try (PreparedStatement ps = c.prepareStatement("UPDATE ledger_compensations SET outcome = ?,"
                + " compensated_at = CURRENT_TIMESTAMP WHERE stream = ? AND entry_ms = ? AND entry_seq = ?")) {
            ps.setString(1, outcome);
            ps.setString(2, stream);
            ps.setLong(3, position.ms());
            ps.setLong(4, position.seq());
            ps.executeUpdate();
        }
    }
}
