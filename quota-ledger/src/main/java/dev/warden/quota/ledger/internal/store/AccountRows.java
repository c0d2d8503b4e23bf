package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.store.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.Collection;
import java.util.List;
import java.util.OptionalLong;

/**
 * The statements that create account rows and keep the open holds, per dialect: an opening adds its
 * amount to the row (creating it), a split account's bucket entry that arrives before the opening creates
 * the row at 0, and a hold's entries open and close its {@code ledger_holds} row. What to write, and when,
 * is the consumer's batch writer's.
 *
 * <p>Why a bucket's entry may come first: a split account's buckets live in other partitions, whose
 * streams the ledger consumes in no order relative to the account's own; each bucket's entries are
 * complete on its stream, so the row starting at 0 and summing them in any interleaving never goes below
 * zero (see migration V5), and the opening adds the initial quota whenever it comes.
 */
public final class AccountRows {

    private final Dialect dialect;

    public AccountRows(Dialect dialect) {
        this.dialect = dialect;
    }

    /** Openings: each adds its amount to the account's row, creating the row when absent. */
    public void open(Connection c, List<JournalEntry> openings) throws SQLException {
        if (openings.isEmpty()) {
            return;
        }
        String sql = dialect == Dialect.POSTGRESQL
                ? "INSERT INTO ledger_accounts (account, balance) VALUES (?, ?) ON CONFLICT (account) DO UPDATE"
                + " SET balance = ledger_accounts.balance + EXCLUDED.balance, updated_at = CURRENT_TIMESTAMP"
                : "MERGE INTO ledger_accounts t USING (SELECT CAST(? AS VARCHAR(128)) AS account, CAST(? AS BIGINT) AS amount) s"
                + " ON t.account = s.account WHEN MATCHED THEN UPDATE SET balance = t.balance + s.amount,"
                + " updated_at = CURRENT_TIMESTAMP WHEN NOT MATCHED THEN INSERT (account, balance) VALUES (s.account, s.amount)";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            for (JournalEntry e : openings) {
                ps.setString(1, e.account());
                ps.setLong(2, e.amount());
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** Rows at 0 for these accounts when absent (a split account's bucket entries consumed before its opening). */
    public void ensure(Connection c, Collection<String> accounts) throws SQLException {
        if (accounts.isEmpty()) {
            return;
        }
        if (dialect == Dialect.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger_accounts (account, balance)"
                    + " SELECT a, 0 FROM unnest(?::varchar[]) AS a ON CONFLICT (account) DO NOTHING")) {
                ps.setArray(1, c.createArrayOf("varchar", accounts.toArray()));
                ps.executeUpdate();
            }
            return;
        }
        try (PreparedStatement ps = c.prepareStatement("MERGE INTO ledger_accounts t USING (SELECT CAST(? AS VARCHAR(128))"
                + " AS account) s ON t.account = s.account WHEN NOT MATCHED THEN INSERT (account, balance) VALUES (s.account, 0)")) {
            for (String a : accounts) {
                ps.setString(1, a);
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    /** A hold's row (its expiry when the entry carries one); {@code hold} is the hold entry. */
    public record OpenHold(JournalEntry hold, OptionalLong expiresMs) {
    }

    /** Opens the holds' rows, then closes those their capture, release or expiry ended (in that order: one batch may carry both). */
    public void holds(Connection c, List<OpenHold> opened, List<JournalEntry> ended) throws SQLException {
        if (!opened.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger_holds (account, hold_id, amount, expires_ms)"
                    + " VALUES (?, ?, ?, ?)")) {
                for (OpenHold h : opened) {
                    ps.setString(1, h.hold().account());
                    ps.setString(2, holdId(h.hold()));
                    ps.setLong(3, h.hold().amount());
                    if (h.expiresMs().isPresent()) {
                        ps.setLong(4, h.expiresMs().getAsLong());
                    } else {
                        ps.setNull(4, Types.BIGINT);
                    }
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
        if (!ended.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement("DELETE FROM ledger_holds WHERE account = ? AND hold_id = ?")) {
                for (JournalEntry e : ended) {
                    ps.setString(1, e.account());
                    ps.setString(2, holdId(e));
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
    }

    /** A hold entry's key is {@code <kind>:<hold id>}. */
    private static String holdId(JournalEntry e) {
        return e.requestId().substring(e.requestId().indexOf(':') + 1);
    }
}
