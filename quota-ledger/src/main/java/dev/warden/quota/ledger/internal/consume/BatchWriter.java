package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.consume.BatchStep.Action;
import dev.warden.quota.ledger.internal.store.AccountRows;
import dev.warden.quota.ledger.internal.store.CompensationRow;
import dev.warden.quota.ledger.internal.store.CompensationRows;
import dev.warden.quota.ledger.internal.store.LedgerSql;
import dev.warden.quota.ledger.internal.store.PartitionFence;
import dev.warden.quota.ledger.internal.store.QuarantineRow;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.KeyLayout;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Writes one batch of one partition's journal in one transaction, fenced: the partition's
 * {@code ledger_partitions} row is updated {@code WHERE token <= <the owner's token>} first, so a
 * superseded owner's batch is refused by the database ({@link PartitionFence.FencedOut}).
 *
 * <p>The fast path costs a handful of statements whatever the batch size: one query for the entries
 * the ledger already holds (by (account, request id)) and one for entries already quarantined or
 * compensated (by position), then the entries inserted and one balance update per account (the
 * batch's changes of an account summed). On PostgreSQL each of these is one fixed statement over
 * arrays ({@code unnest}), planned once whatever the batch size; on H2, multi-row statements and JDBC
 * batches. When the database refuses anything (a constraint, an unknown account) the
 * transaction is rolled back and replayed entry by entry, each under a savepoint, so the refused
 * entries go to quarantine and the rest are applied. Errors that are not refusals (the database is
 * down) are thrown, and the caller retries the whole batch.
 *
 * <p>Summing an account's changes means the {@code CHECK (balance >= 0)} sees the balance after the
 * batch rather than after each entry: an entry that would dip below zero in between is caught only
 * if the balance ends below zero (then the entry-by-entry replay finds it). Redis applies the same
 * entries in the same order under the same check, so a dip the sum hides is one where Redis and the
 * database already disagree, and reconciliation reports that.
 */
public final class BatchWriter {

    /** A journal message as read from the stream. */
    public record Raw(String id, Map<String, String> fields) {
    }

    /** One partition's batch: its entries and the fence its owner writes them under. */
    public record Part(int partition, String stream, PartitionFence fence, List<Raw> raws) {
    }

    private final Dialect dialect;
    private final KeyLayout layout;
    private final LedgerSql sql;
    private final AccountRows rows;
    private final BatchClassifier classifier;

    /** @param layout where each account's own partition is (a split account's bucket entries arrive in others) */
    public BatchWriter(Dialect dialect, KeyLayout layout) {
        this.dialect = dialect;
        this.layout = layout;
        this.sql = new LedgerSql(dialect);
        this.rows = new AccountRows(dialect);
        this.classifier = new BatchClassifier(sql);
    }

    /**
     * Writes one partition's batch and commits: the fast path, or when the database refuses something,
     * entry by entry. On return the batch is durable; on a thrown exception nothing of it is (rolled back).
     *
     * @throws PartitionFence.FencedOut when a newer owner of the partition has recorded a higher token
     */
    public List<BatchStep> write(Connection c, Part part, Duration lockTimeout) throws SQLException, PartitionFence.FencedOut {
        c.setAutoCommit(false);
        try {
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            part.fence().check(c);
            List<BatchStep> steps = classifier.classify(c, List.of(part));
            if (fast(c, steps)) {
                c.commit();
                return steps;
            }
            c.rollback();
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            part.fence().check(c);
            steps = classifier.classify(c, List.of(part));
            slow(c, steps);
            c.commit();
            return steps;
        } catch (SQLException | PartitionFence.FencedOut | RuntimeException e) {
            rollback(c, e);
            throw e;
        }
    }

    /**
     * What {@link #writeTogether} did: the steps once committed; or nothing written, because these
     * partitions are fenced (a newer owner recorded a higher token), or because the database refused
     * something (both empty: write the parts one by one with {@link #write}, which finds the entry).
     */
    public record Together(Optional<List<BatchStep>> steps, java.util.Set<String> fenced) {
    }

    /**
     * Writes several partitions' batches in one transaction, on the fast path only: the fences, one
     * key lookup, one insert, one balance update and one commit for all of them, so a consumer that owns
     * many partitions pays the round trips and the commit once per round rather than once per partition.
     */
    Together writeTogether(Connection c, List<Part> parts, Duration lockTimeout) throws SQLException {
        c.setAutoCommit(false);
        try {
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            java.util.Set<String> fenced = PartitionFence.checkAll(c, dialect, parts.stream().map(Part::fence).toList());
            if (!fenced.isEmpty()) {
                c.rollback();
                return new Together(Optional.empty(), fenced);
            }
            List<BatchStep> steps = classifier.classify(c, parts);
            if (steps.stream().anyMatch(st -> st.action == Action.QUARANTINE) || !fast(c, steps)) {
                c.rollback();
                return new Together(Optional.empty(), java.util.Set.of());
            }
            c.commit();
            return new Together(Optional.of(steps), java.util.Set.of());
        } catch (SQLException | RuntimeException e) {
            rollback(c, e);
            throw e;
        }
    }

    private static void rollback(Connection c, Exception e) {
        try {
            c.rollback();
        } catch (SQLException suppressed) {
            e.addSuppressed(suppressed);
        }
    }

    /** Whether the database refused the data (as opposed to failing): SQLSTATE class 22 or 23. */
    static boolean refused(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s && s.getSQLState() != null
                    && (s.getSQLState().startsWith("23") || s.getSQLState().startsWith("22"))) {
                return true;
            }
            if (t instanceof BatchUpdateException b && b.getNextException() != null && b.getNextException() != t
                    && refused(b.getNextException())) {
                return true;
            }
        }
        return false;
    }

    // ---- the fast path: a few statements per batch ----

    private boolean fast(Connection c, List<BatchStep> steps) throws SQLException {
        List<JournalEntry> openings = new ArrayList<>();
        List<JournalEntry> entries = new ArrayList<>();
        Map<String, long[]> deltas = new TreeMap<>(); // sorted: every writer locks accounts in one order
        Set<String> bucketRows = new java.util.TreeSet<>();
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
                    } else {
                        add(deltas, s.entry);
                        if (ofBucket(s.entry)) {
                            bucketRows.add(s.entry.account());
                        }
                    }
                    holds(s, opened, ended);
                    entries.add(s.entry);
                }
                case COMPENSATE -> {
                    add(deltas, s.entry);
                    if (ofBucket(s.entry)) {
                        bucketRows.add(s.entry.account());
                    }
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
            if (!sql.applyDeltas(c, deltas)) {
                return false; // an unknown account: find it entry by entry
            }
            sql.insertEntries(c, entries);
            sql.applyPostings(c, postings);
            rows.holds(c, opened, ended);
            CompensationRows.insertAll(c, compensations);
            sql.insertQuarantine(c, quarantine);
            return true;
        } catch (SQLException e) {
            if (refused(e)) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Whether the entry is of a split account's bucket in another partition than the account's own: its
     * account row may not exist yet (the opening is in another stream), and starts at 0.
     */
    private boolean ofBucket(JournalEntry e) {
        return e.partition() != layout.partition(e.account());
    }

    /** A hold entry opens the hold's row; a capture, release or expiry closes it. */
    private static void holds(BatchStep s, List<AccountRows.OpenHold> opened, List<JournalEntry> ended) {
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

    /** Sums an entry's changes into its account's {available, held, highest fencing token}. */
    private static void add(Map<String, long[]> deltas, JournalEntry e) {
        long[] d = deltas.computeIfAbsent(e.account(), k -> new long[]{0, 0, -1});
        d[0] += e.delta();
        d[1] += e.heldDelta();
        if (e.kind() == EntryKind.DEDUCT && e.token().isPresent()) {
            d[2] = Math.max(d[2], e.token().getAsLong());
        }
    }

    // ---- the slow path: entry by entry, each under a savepoint ----

    private void slow(Connection c, List<BatchStep> steps) throws SQLException {
        for (BatchStep s : steps) {
            if (s.action != Action.APPLY && s.action != Action.COMPENSATE) {
                continue;
            }
            Savepoint savepoint = c.setSavepoint();
            try {
                if (s.action == Action.APPLY && s.entry.kind() == EntryKind.OPEN) {
                    rows.open(c, List.of(s.entry));
                } else {
                    if (ofBucket(s.entry)) {
                        rows.ensure(c, List.of(s.entry.account()));
                    }
                    if (!sql.updateBalance(c, s.entry)) {
                        c.rollback(savepoint);
                        s.quarantine(QuarantineReason.UNKNOWN_ACCOUNT, "the ledger has no account '" + s.entry.account() + "'");
                        continue;
                    }
                }
                if (s.action == Action.APPLY) {
                    sql.insertEntry(c, s.entry);
                    if (s.entry.kind() == EntryKind.POST) {
                        sql.applyPostings(c, List.of(s.entry));
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
                if (!refused(e)) {
                    throw e;
                }
                c.rollback(savepoint);
                s.quarantine(reason(s, e), describe(e));
            }
        }
        sql.insertQuarantine(c, steps.stream().filter(s -> s.action == Action.QUARANTINE).map(BatchStep::quarantineRow).toList());
    }

    private static QuarantineReason reason(BatchStep s, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String message = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
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
