package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.consume.BatchStep.Action;
import dev.warden.quota.ledger.internal.store.AccountRows;
import dev.warden.quota.ledger.internal.store.CompensationRows;
import dev.warden.quota.ledger.internal.store.EntryRows;
import dev.warden.quota.ledger.internal.store.LedgerSql;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.redis.KeyLayout;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The slow path of a classified batch, taken when the fast one was refused: entry by entry, each
 * under a savepoint, so the entries the database refuses (a CHECK, an unknown account, a key) go to
 * quarantine with the reason and the rest are applied, each in its place.
 *
 * <p>Stateless apart from its statement helpers; one per batch writer.
 */
final class EntryByEntryWrite {

    private final KeyLayout layout;
    private final LedgerSql sql;
    private final AccountRows rows;
    private final EntryRows entryRows;

    EntryByEntryWrite(KeyLayout layout, LedgerSql sql, AccountRows rows, EntryRows entryRows) {
        this.layout = layout;
        this.sql = sql;
        this.rows = rows;
        this.entryRows = entryRows;
    }

    /** Writes the steps inside the caller's transaction, turning the refused ones into quarantine. */
    void write(Connection c, List<BatchStep> steps) throws SQLException {
        for (BatchStep s : steps) {
            if (s.action != Action.APPLY && s.action != Action.COMPENSATE) {
                continue;
            }
            Savepoint savepoint = c.setSavepoint();
            try {
                if (s.action == Action.APPLY && s.entry.kind() == EntryKind.OPEN) {
                    rows.open(c, List.of(s.entry));
                } else {
                    if (ofBucket(layout, s.entry)) {
                        rows.ensure(c, List.of(s.entry.account()));
                    }
                    if (!sql.updateBalance(c, s.entry)) {
                        c.rollback(savepoint);
                        s.quarantine(QuarantineReason.UNKNOWN_ACCOUNT, "the ledger has no account '" + s.entry.account() + "'");
                        continue;
                    }
                }
                if (s.action == Action.APPLY) {
                    entryRows.insert(c, s.entry);
                    if (s.entry.kind() == EntryKind.POST && !sql.applyPostings(c, List.of(s.entry))) {
                        c.rollback(savepoint); // one posting cannot dip and come back: a safeguard only
                        s.quarantine(QuarantineReason.NEGATIVE_BALANCE, "a named balance would go below zero");
                        continue;
                    }
                    List<AccountRows.OpenHold> opened = new ArrayList<>();
                    List<JournalEntry> ended = new ArrayList<>();
                    holds(s, opened, ended);
                    rows.holds(c, opened, ended);
                } else {
                    CompensationRows.insert(c, s.compensationRow());
                }
                c.releaseSavepoint(savepoint);
            } catch (SQLException e) {
                if (!BatchWriter.refused(e)) {
                    throw e;
                }
                c.rollback(savepoint);
                s.quarantine(reason(s, e), describe(e));
            }
        }
        sql.insertQuarantine(c, steps.stream().filter(s -> s.action == Action.QUARANTINE).map(BatchStep::quarantineRow).toList());
    }

    /**
     * Whether the entry is of a split account's bucket in another partition than the account's own: its
     * account row may not exist yet (the opening is in another stream), and starts at 0.
     */
    static boolean ofBucket(KeyLayout layout, JournalEntry e) {
        return e.partition() != layout.partition(e.account());
    }

    /** A hold entry opens the hold's row; a capture, release or expiry closes it. */
    static void holds(BatchStep s, List<AccountRows.OpenHold> opened, List<JournalEntry> ended) {
        switch (s.entry.kind()) {
            case HOLD -> {
                // Absent on an entry written before holds carried their expiry (or unreadable): restored as due.
                opened.add(new AccountRows.OpenHold(s.entry, JournalEntry.expires(s.raw.fields())));
            }
            case CAPTURE, RELEASE, EXPIRE -> ended.add(s.entry);
            default -> {
            }
        }
    }

    private static QuarantineReason reason(BatchStep s, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String message = String.valueOf(e.getMessage()).toLowerCase(Locale.ROOT);
        if (state.equals("23505") && s.entry.kind() == EntryKind.OPEN) {
            return QuarantineReason.ACCOUNT_EXISTS;
        }
        // PostgreSQL: 23514 check_violation; H2: 23513 CHECK_CONSTRAINT_VIOLATED.
        if ((state.equals("23514") || state.equals("23513"))
                && (message.contains("balance_non_negative") || message.contains("held_non_negative")
                || message.contains("amount_non_negative"))) {
            return QuarantineReason.NEGATIVE_BALANCE;
        }
        return QuarantineReason.CONSTRAINT;
    }

    private static String describe(SQLException e) {
        SQLException cause = e;
        if (e instanceof BatchUpdateException b && b.getNextException() != null) {
            cause = b.getNextException();
        }
        return "SQLSTATE " + cause.getSQLState() + ": " + cause.getMessage();
    }
}
