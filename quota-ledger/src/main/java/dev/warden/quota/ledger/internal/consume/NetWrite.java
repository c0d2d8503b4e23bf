package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.store.AccountRows;
import dev.warden.quota.ledger.internal.store.CompensationRow;
import dev.warden.quota.ledger.internal.store.CompensationRows;
import dev.warden.quota.ledger.internal.store.EntryRows;
import dev.warden.quota.ledger.internal.store.LedgerSql;
import dev.warden.quota.ledger.internal.store.NetChanges;
import dev.warden.quota.ledger.internal.store.QuarantineRow;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.redis.KeyLayout;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The fast path of a classified batch: a handful of statements whatever its size. The openings, one
 * update per account with its net change ({@link NetChanges}: refused when some entry alone would have
 * taken the account below zero), the entries in one {@code COPY} ({@link EntryRows}; one JDBC batch on
 * H2), the postings' named balances, holds, compensations and quarantined entries. Only the accepted
 * steps move a balance: redeliveries and refusals were set aside by the classifier, before any net.
 *
 * <p>Stateless apart from its statement helpers; one per batch writer.
 */
final class NetWrite {

    /** How the database took the batch. */
    enum Result {
        WRITTEN,
        /** The table already holds an entry's key or position (SQLSTATE 23505): classify with the lookup. */
        KEY_HELD,
        /** Refused otherwise (a CHECK, an unknown account, a dip below zero): write entry by entry. */
        REFUSED
    }

    private final KeyLayout layout;
    private final LedgerSql sql;
    private final AccountRows rows;
    private final EntryRows entryRows;

    NetWrite(KeyLayout layout, LedgerSql sql, AccountRows rows, EntryRows entryRows) {
        this.layout = layout;
        this.sql = sql;
        this.rows = rows;
        this.entryRows = entryRows;
    }

    /**
     * Writes the steps inside the caller's transaction. Anything but {@link Result#WRITTEN} leaves the
     * transaction to be rolled back; errors that are not refusals (the database is down) are thrown.
     */
    Result write(Connection c, List<BatchStep> steps) throws SQLException {
        List<JournalEntry> openings = new ArrayList<>();
        List<JournalEntry> entries = new ArrayList<>();
        List<EntryId> positions = new ArrayList<>();
        NetChanges nets = new NetChanges();
        Set<String> bucketRows = new TreeSet<>();
        List<CompensationRow> compensations = new ArrayList<>();
        List<QuarantineRow> quarantine = new ArrayList<>();
        List<JournalEntry> postings = new ArrayList<>();
        List<AccountRows.OpenHold> opened = new ArrayList<>();
        List<JournalEntry> ended = new ArrayList<>();
        for (BatchStep s : steps) {
            switch (s.action) {
                case APPLY -> {
                    if (s.entry.kind() == EntryKind.POST) {
                        postings.add(s.entry);
                    }
                    if (s.entry.kind() == EntryKind.OPEN) {
                        openings.add(s.entry);
                        nets.open(s.entry);
                    } else {
                        change(nets, bucketRows, s.entry);
                    }
                    EntryByEntryWrite.holds(s, opened, ended);
                    entries.add(s.entry);
                    positions.add(s.position);
                }
                case COMPENSATE -> {
                    change(nets, bucketRows, s.entry);
                    compensations.add(s.compensationRow());
                }
                case QUARANTINE -> quarantine.add(s.quarantineRow());
                default -> {
                }
            }
        }
        try {
            // Openings first: an account opened in this batch may be changed later in it.
            rows.open(c, openings);
            rows.ensure(c, bucketRows);
            // The accounts' rows before the entries: every writer locks its accounts first, in one order.
            if (!sql.applyNets(c, nets)) {
                return Result.REFUSED; // an unknown account, or a dip below zero: found entry by entry
            }
            entryRows.insertAll(c, entries, positions);
            if (!sql.applyPostings(c, postings)) {
                return Result.REFUSED;
            }
            rows.holds(c, opened, ended);
            CompensationRows.insertAll(c, compensations);
            sql.insertQuarantine(c, quarantine);
            return Result.WRITTEN;
        } catch (SQLException e) {
            if (BatchWriter.keyHeld(e)) {
                return Result.KEY_HELD;
            }
            if (BatchWriter.refused(e)) {
                return Result.REFUSED;
            }
            throw e;
        }
    }

    private void change(NetChanges nets, Set<String> bucketRows, JournalEntry e) {
        nets.add(e);
        if (EntryByEntryWrite.ofBucket(layout, e)) {
            bucketRows.add(e.account());
        }
    }
}
