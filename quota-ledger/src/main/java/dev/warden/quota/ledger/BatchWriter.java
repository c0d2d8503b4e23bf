package dev.warden.quota.ledger;

import dev.warden.quota.EntryKind;
import dev.warden.quota.spi.KeyLayout;
import dev.warden.quota.ledger.internal.EntryId;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
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
final class BatchWriter {

    /** A journal message as read from the stream. */
    record Raw(String id, Map<String, String> fields) {
    }

    /** One partition's batch: its entries and the fence its owner writes them under. */
    record Part(int partition, String stream, PartitionFence fence, List<Raw> raws) {
    }

    enum Action {
        /** First time: insert the entry, apply it to the balance. */
        APPLY,
        /** The ledger already holds this very entry: a redelivery; nothing to write. */
        REDELIVERED,
        /** A second entry for a request id the ledger holds: apply it and compensate in Redis. */
        COMPENSATE,
        /** A replay already recorded by an earlier attempt: compensate in Redis again (idempotent). */
        COMPENSATE_AGAIN,
        /** Refused: store in quarantine. */
        QUARANTINE,
        /** Already in quarantine (an earlier attempt stored it but did not acknowledge it). */
        ALREADY_QUARANTINED
    }

    static final class Step {
        final Part part;
        final Raw raw;
        final EntryId position;
        final JournalEntry entry;
        Action action;
        QuarantineReason reason;
        String detail;

        Step(Part part, Raw raw, EntryId position, JournalEntry entry) {
            this.part = part;
            this.raw = raw;
            this.position = position;
            this.entry = entry;
        }

        void quarantine(QuarantineReason reason, String detail) {
            this.action = Action.QUARANTINE;
            this.reason = reason;
            this.detail = detail;
        }

        String compensationRequestId() {
            return "ledger-comp-" + entry.partition() + "-" + entry.entryId();
        }

        EntryKind compensationKind() {
            return entry.kind() == EntryKind.DEDUCT ? EntryKind.REFUND : EntryKind.DEDUCT;
        }

        QuarantinedEntry quarantined() {
            return new QuarantinedEntry(part.stream(), raw.id(), raw.fields(), reason, detail, Instant.now(), Optional.empty());
        }
    }

    private final Ledger.Dialect dialect;
    private final KeyLayout layout;
    private final LedgerSql sql;
    private final AccountRows rows;

    /** @param layout where each account's own partition is (a split account's bucket entries arrive in others) */
    BatchWriter(Ledger.Dialect dialect, KeyLayout layout) {
        this.dialect = dialect;
        this.layout = layout;
        this.sql = new LedgerSql(dialect);
        this.rows = new AccountRows(dialect);
    }

    /**
     * Writes one partition's batch and commits: the fast path, or when the database refuses something,
     * entry by entry. On return the batch is durable; on a thrown exception nothing of it is (rolled back).
     *
     * @throws PartitionFence.FencedOut when a newer owner of the partition has recorded a higher token
     */
    List<Step> write(Connection c, Part part, Duration lockTimeout) throws SQLException, PartitionFence.FencedOut {
        c.setAutoCommit(false);
        try {
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            part.fence().check(c);
            List<Step> steps = classify(c, List.of(part));
            if (fast(c, steps)) {
                c.commit();
                return steps;
            }
            c.rollback();
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            part.fence().check(c);
            steps = classify(c, List.of(part));
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
    record Together(Optional<List<Step>> steps, java.util.Set<String> fenced) {
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
            List<Step> steps = classify(c, parts);
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

    // ---- classification ----

    private List<Step> classify(Connection c, List<Part> parts) throws SQLException {
        List<Step> steps = new ArrayList<>();
        for (Part part : parts) {
            for (Raw raw : part.raws()) {
                steps.add(parse(part, raw));
            }
        }
        Map<JournalEntry.Key, LedgerSql.Position> known = knownKeys(c, steps);
        Set<LedgerSql.Position> compensated = new HashSet<>();
        Set<LedgerSql.Position> quarantined = new HashSet<>();
        positions(c, steps, compensated, quarantined);
        Map<JournalEntry.Key, LedgerSql.Position> inBatch = new HashMap<>();
        for (Step s : steps) {
            LedgerSql.Position here = new LedgerSql.Position(s.part.stream(), s.position);
            if (quarantined.contains(here)) {
                s.action = Action.ALREADY_QUARANTINED;
                continue;
            }
            if (s.action == Action.QUARANTINE) {
                continue;
            }
            if (compensated.contains(here)) {
                s.action = Action.COMPENSATE_AGAIN;
                continue;
            }
            JournalEntry.Key key = s.entry.key();
            LedgerSql.Position first = known.containsKey(key) ? known.get(key) : inBatch.get(key);
            if (first == null) {
                s.action = Action.APPLY;
                inBatch.put(key, here);
            } else if (first.equals(here) && known.containsKey(key)) {
                s.action = Action.REDELIVERED;
            } else if (s.entry.ofHold()) {
                // Redis ends a hold once; a second entry of a kind means its record expired and the id was reused.
                s.quarantine(QuarantineReason.CONSTRAINT, "a second " + s.entry.kind().wireName() + " entry of hold '"
                        + s.entry.requestId().substring(s.entry.kind().wireName().length() + 1) + "' of account '"
                        + s.entry.account() + "' (the ledger holds one as entry " + first.id() + " of " + first.stream()
                        + "): the hold id was reused after its record expired");
            } else if (s.entry.ofMove()) {
                // Redis gives a move once (its record in the target's slot outlives the move).
                s.quarantine(QuarantineReason.CONSTRAINT, "a second " + s.entry.kind().wireName() + " entry of move '"
                        + s.entry.requestId() + "' of account '" + s.entry.account() + "' (the ledger holds one as entry "
                        + first.id() + " of " + first.stream() + ")");
            } else if (s.entry.kind() == EntryKind.POST) {
                // A posting moves several balances: no single compensation undoes it, so a human decides.
                s.quarantine(QuarantineReason.CONSTRAINT, "a second entry for request id '" + s.entry.requestId()
                        + "' of account '" + s.entry.account() + "', a posting (the ledger holds one as entry " + first.id()
                        + " of " + first.stream() + "): the request id was reused after its record expired");
            } else if (s.entry.kind() == EntryKind.OPEN) {
                s.quarantine(QuarantineReason.ACCOUNT_EXISTS, "account '" + s.entry.account() + "' was opened again"
                        + " (the ledger holds its opening as entry " + first.id() + " of " + first.stream()
                        + "): Redis lost it and it was reopened");
            } else {
                s.action = Action.COMPENSATE;
            }
        }
        return steps;
    }

    private static Step parse(Part part, Raw raw) {
        EntryId position;
        try {
            position = EntryId.parse(raw.id());
        } catch (IllegalArgumentException e) {
            position = EntryId.ZERO;
        }
        try {
            if (position.equals(EntryId.ZERO)) {
                throw new IllegalArgumentException("not a stream entry id: " + raw.id());
            }
            return new Step(part, raw, position, JournalEntry.decode(part.partition(), part.stream(), raw.id(), raw.fields()));
        } catch (IllegalArgumentException e) {
            Step s = new Step(part, raw, position, null);
            s.quarantine(QuarantineReason.MALFORMED, String.valueOf(e.getMessage()));
            return s;
        }
    }

    private Map<JournalEntry.Key, LedgerSql.Position> knownKeys(Connection c, List<Step> steps) throws SQLException {
        List<JournalEntry.Key> keys = new ArrayList<>();
        for (Step s : steps) {
            if (s.entry != null) {
                keys.add(s.entry.key());
            }
        }
        return sql.knownKeys(c, keys);
    }

    /** Positions of the batches' ranges already recorded as compensated or quarantined (an earlier attempt). */
    private void positions(Connection c, List<Step> steps, Set<LedgerSql.Position> compensated,
                           Set<LedgerSql.Position> quarantined) throws SQLException {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        Set<String> streams = new java.util.TreeSet<>();
        for (Step s : steps) {
            min = Math.min(min, s.position.ms());
            max = Math.max(max, s.position.ms());
            streams.add(s.part.stream());
        }
        if (!streams.isEmpty()) {
            sql.positions(c, streams, min, max, compensated, quarantined);
        }
    }

    // ---- the fast path: a few statements per batch ----

    private boolean fast(Connection c, List<Step> steps) throws SQLException {
        List<JournalEntry> openings = new ArrayList<>();
        List<JournalEntry> entries = new ArrayList<>();
        Map<String, long[]> deltas = new TreeMap<>(); // sorted: every writer locks accounts in one order
        Set<String> bucketRows = new java.util.TreeSet<>();
        List<Step> compensations = new ArrayList<>();
        List<Step> quarantine = new ArrayList<>();
        List<JournalEntry> postings = new ArrayList<>();
        List<AccountRows.OpenHold> opened = new ArrayList<>();
        List<JournalEntry> ended = new ArrayList<>();
        for (Step s : steps) {
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
                    compensations.add(s);
                }
                case QUARANTINE -> quarantine.add(s);
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
            sql.insertCompensations(c, compensations);
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
    private static void holds(Step s, List<AccountRows.OpenHold> opened, List<JournalEntry> ended) {
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

    private void slow(Connection c, List<Step> steps) throws SQLException {
        for (Step s : steps) {
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
                    sql.insertCompensation(c, s);
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
        sql.insertQuarantine(c, steps.stream().filter(s -> s.action == Action.QUARANTINE).toList());
    }

    private static QuarantineReason reason(Step s, SQLException e) {
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

    /** Records Redis's answer to a compensation; best effort (the compensation's own journal entry is the durable record). */
    static void recordOutcome(Connection c, String stream, EntryId position, String outcome) throws SQLException {
        LedgerSql.recordOutcome(c, stream, position, outcome);
    }
}
