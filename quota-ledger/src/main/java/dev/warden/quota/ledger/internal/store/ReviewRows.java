package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.ledger.journal.QuarantinedEntry;
import dev.warden.quota.ledger.journal.RefusedCompensation;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The rows a person reviews and resolves: quarantined entries and compensations Redis refused. */
public final class ReviewRows {

    private ReviewRows() {
    }

    /**
     * The quarantined entries, oldest first.
     *
     * @param unresolvedOnly leave out those marked resolved
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static List<QuarantinedEntry> quarantine(DataSource dataSource, boolean unresolvedOnly) {
        String sql = "SELECT stream, entry_id, fields, reason, detail, quarantined_at, resolved_at FROM ledger_quarantine"
                + (unresolvedOnly ? " WHERE resolved_at IS NULL" : "") + " ORDER BY quarantined_at, stream, entry_ms, entry_seq";
        List<QuarantinedEntry> result = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Timestamp resolved = rs.getTimestamp(7);
                result.add(new QuarantinedEntry(rs.getString(1), rs.getString(2), FieldsCodec.decode(rs.getString(3)),
                        QuarantineReason.valueOf(rs.getString(4)), rs.getString(5), rs.getTimestamp(6).toInstant(),
                        Optional.ofNullable(resolved).map(Timestamp::toInstant)));
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger quarantine: " + e.getMessage(), e);
        }
        return result;
    }

    /**
     * Marks a quarantined entry resolved (after a person fixed the balance, for example), keeping it.
     *
     * @return whether an unresolved entry was found and marked
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static boolean resolveQuarantined(DataSource dataSource, String stream, String entryId, String resolution) {
        return markResolved(dataSource, "ledger_quarantine", "", stream, entryId, resolution, "a quarantined entry");
    }

    /**
     * The compensations Redis refused, oldest first (see {@link RefusedCompensation}).
     *
     * @param unresolvedOnly leave out those marked resolved
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static List<RefusedCompensation> refusedCompensations(DataSource dataSource, boolean unresolvedOnly) {
        String sql = "SELECT stream, entry_id, account, kind, amount, request_id, compensation_request_id, outcome,"
                + " recorded_at, resolved_at FROM ledger_compensations WHERE outcome IS NOT NULL AND outcome NOT IN"
                + " ('APPLIED', 'DUPLICATE')" + (unresolvedOnly ? " AND resolved_at IS NULL" : "")
                + " ORDER BY recorded_at, stream, entry_ms, entry_seq";
        List<RefusedCompensation> result = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Timestamp resolved = rs.getTimestamp(10);
                result.add(new RefusedCompensation(rs.getString(1), rs.getString(2), rs.getString(3),
                        dev.warden.quota.EntryKind.fromWireName(rs.getString(4)), rs.getLong(5), rs.getString(6),
                        rs.getString(7), rs.getString(8), rs.getTimestamp(9).toInstant(),
                        Optional.ofNullable(resolved).map(Timestamp::toInstant)));
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's compensations: " + e.getMessage(), e);
        }
        return result;
    }

    /**
     * Marks a refused compensation resolved (after a person settled the replay), keeping it.
     *
     * @return whether an unresolved refused compensation was found and marked
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static boolean resolveCompensation(DataSource dataSource, String stream, String entryId, String resolution) {
        return markResolved(dataSource, "ledger_compensations",
                " AND outcome IS NOT NULL AND outcome NOT IN ('APPLIED', 'DUPLICATE')", stream, entryId, resolution, "a compensation");
    }

    /** Marks one unresolved row of a table a person resolves (the row stays), and says whether there was one. */
    private static boolean markResolved(DataSource dataSource, String table, String condition, String stream, String entryId,
                                        String resolution, String what) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET resolved_at = CURRENT_TIMESTAMP, resolution = ? WHERE stream = ? AND entry_id = ? AND resolved_at IS NULL"
                + condition)) {
            ps.setString(1, resolution);
            ps.setString(2, stream);
            ps.setString(3, entryId);
            int n = ps.executeUpdate();
            if (!c.getAutoCommit()) {
                c.commit();
            }
            return n > 0;
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not resolve " + what + ": " + e.getMessage(), e);
        }
    }
}
