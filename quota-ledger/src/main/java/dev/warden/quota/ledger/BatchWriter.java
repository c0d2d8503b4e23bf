package dev.warden.quota.ledger;

import dev.warden.quota.Amount;
import dev.warden.quota.EntryKind;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.spi.Ids;
import dev.warden.quota.ledger.internal.EntryId;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
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
        final Raw raw;
        final EntryId position;
        final JournalEntry entry;
        Action action;
        QuarantineReason reason;
        String detail;

        Step(Raw raw, EntryId position, JournalEntry entry) {
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
            return new QuarantinedEntry(entry == null ? "" : entry.stream(), raw.id(), raw.fields(), reason, detail,
                    Instant.now(), Optional.empty());
        }
    }

    private static final String INSERT_ACCOUNT = "INSERT INTO ledger_accounts (account, balance) VALUES (?, ?)";
    private static final String UPDATE_BALANCE = "UPDATE ledger_accounts SET balance = balance + ?,"
            + " updated_at = CURRENT_TIMESTAMP WHERE account = ?";
    private static final String INSERT_ENTRY_HEAD = "INSERT INTO ledger_entries (request_id, account, kind, amount,"
            + " balance_after, token, stream, entry_id, entry_ms, entry_seq) VALUES ";
    private static final String ENTRY_ROW = "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final int ENTRY_COLUMNS = 10;
    private static final String INSERT_ENTRY = INSERT_ENTRY_HEAD + ENTRY_ROW;
    private static final String INSERT_COMPENSATION = "INSERT INTO ledger_compensations (stream, entry_id, entry_ms,"
            + " entry_seq, request_id, account, kind, amount, balance_after, token, compensation_request_id,"
            + " compensation_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final String INSERT_QUARANTINE = "INSERT INTO ledger_quarantine (stream, entry_id, entry_ms,"
            + " entry_seq, account, kind, amount, request_id, balance_after, fields, reason, detail)"
            + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    /** Pairs per key lookup, rows per multi-row insert, accounts per balance update: well under 32767 parameters. */
    private static final int CHUNK = 1000;

    private final Ledger.Dialect dialect;
    private final int partition;
    private final String stream;
    private final PartitionFence fence;

    BatchWriter(Ledger.Dialect dialect, int partition, String stream, PartitionFence fence) {
        this.dialect = dialect;
        this.partition = partition;
        this.stream = stream;
        this.fence = fence;
    }

    /**
     * Writes the batch and commits. On return the batch is durable; on a thrown exception nothing of
     * it is (rolled back).
     *
     * @throws PartitionFence.FencedOut when a newer owner of the partition has recorded a higher token
     */
    List<Step> write(Connection c, List<Raw> batch, Duration lockTimeout) throws SQLException, PartitionFence.FencedOut {
        c.setAutoCommit(false);
        try {
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            fence.check(c);
            List<Step> steps = classify(c, batch);
            if (fast(c, steps)) {
                c.commit();
                return steps;
            }
            c.rollback();
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            fence.check(c);
            steps = classify(c, batch);
            slow(c, steps);
            c.commit();
            return steps;
        } catch (SQLException | PartitionFence.FencedOut | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
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

    private List<Step> classify(Connection c, List<Raw> batch) throws SQLException {
        List<Step> steps = new ArrayList<>(batch.size());
        for (Raw raw : batch) {
            steps.add(parse(raw));
        }
        Map<JournalEntry.Key, EntryId> known = knownKeys(c, steps);
        Set<EntryId> compensated = new HashSet<>();
        Set<EntryId> quarantined = new HashSet<>();
        positions(c, steps, compensated, quarantined);
        Map<JournalEntry.Key, EntryId> inBatch = new HashMap<>();
        for (Step s : steps) {
            if (quarantined.contains(s.position)) {
                s.action = Action.ALREADY_QUARANTINED;
                continue;
            }
            if (s.action == Action.QUARANTINE) {
                continue;
            }
            if (compensated.contains(s.position)) {
                s.action = Action.COMPENSATE_AGAIN;
                continue;
            }
            JournalEntry.Key key = s.entry.key();
            EntryId first = known.containsKey(key) ? known.get(key) : inBatch.get(key);
            if (first == null) {
                s.action = Action.APPLY;
                inBatch.put(key, s.position);
            } else if (first.equals(s.position) && known.containsKey(key)) {
                s.action = Action.REDELIVERED;
            } else if (s.entry.kind() == EntryKind.OPEN) {
                s.quarantine(QuarantineReason.ACCOUNT_EXISTS, "account '" + s.entry.account() + "' was opened again"
                        + " (the ledger holds its opening as entry " + first + "): Redis lost it and it was reopened");
            } else {
                s.action = Action.COMPENSATE;
            }
        }
        return steps;
    }

    private Step parse(Raw raw) {
        EntryId position;
        try {
            position = EntryId.parse(raw.id());
        } catch (IllegalArgumentException e) {
            position = EntryId.ZERO;
        }
        Map<String, String> f = raw.fields();
        try {
            String account = Ids.check(InvalidIdException.Field.ACCOUNT, require(f, "account"));
            EntryKind kind = EntryKind.fromWireName(require(f, "kind"));
            long amount = Long.parseLong(require(f, "amount"));
            if (kind == EntryKind.OPEN ? amount < 0 || amount > Amount.MAX : Amount.problem(amount).isPresent()) {
                throw new IllegalArgumentException("amount " + amount + " is out of range for " + kind.wireName());
            }
            String request = f.getOrDefault("request", "");
            if (kind != EntryKind.OPEN) {
                Ids.check(InvalidIdException.Field.REQUEST, request);
            }
            long balance = Long.parseLong(require(f, "balance"));
            if (balance < 0) {
                throw new IllegalArgumentException("negative balance " + balance);
            }
            String tokenText = f.getOrDefault("token", "-");
            OptionalLong token = tokenText.equals("-") ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(tokenText));
            if (position.equals(EntryId.ZERO)) {
                throw new IllegalArgumentException("not a stream entry id: " + raw.id());
            }
            return new Step(raw, position, new JournalEntry(partition, stream, raw.id(), account, kind, amount,
                    kind == EntryKind.OPEN ? "" : request, balance, token));
        } catch (IllegalArgumentException | NullPointerException e) {
            Step s = new Step(raw, position, null);
            s.quarantine(QuarantineReason.MALFORMED, String.valueOf(e.getMessage()));
            return s;
        }
    }

    private static String require(Map<String, String> f, String name) {
        String v = f.get(name);
        if (v == null) {
            throw new IllegalArgumentException("field '" + name + "' is missing");
        }
        return v;
    }

    private Map<JournalEntry.Key, EntryId> knownKeys(Connection c, List<Step> steps) throws SQLException {
        List<JournalEntry.Key> keys = new ArrayList<>();
        for (Step s : steps) {
            if (s.entry != null) {
                keys.add(s.entry.key());
            }
        }
        Map<JournalEntry.Key, EntryId> known = new HashMap<>();
        if (dialect == Ledger.Dialect.POSTGRESQL) {
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

    private void readKnown(PreparedStatement ps, Map<JournalEntry.Key, EntryId> known) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                // Another stream's entry under the same key is a different entry: never equal to ours.
                EntryId id = rs.getString(3).equals(stream) ? new EntryId(rs.getLong(4), rs.getLong(5)) : new EntryId(-1, -1);
                known.put(new JournalEntry.Key(rs.getString(1), rs.getString(2)), id);
            }
        }
    }

    /** Positions of this batch's range already recorded as compensated or quarantined (an earlier attempt). */
    private void positions(Connection c, List<Step> steps, Set<EntryId> compensated, Set<EntryId> quarantined)
            throws SQLException {
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (Step s : steps) {
            min = Math.min(min, s.position.ms());
            max = Math.max(max, s.position.ms());
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT 'c', entry_ms, entry_seq FROM ledger_compensations"
                + " WHERE stream = ? AND entry_ms BETWEEN ? AND ? UNION ALL SELECT 'q', entry_ms, entry_seq"
                + " FROM ledger_quarantine WHERE stream = ? AND entry_ms BETWEEN ? AND ?")) {
            ps.setString(1, stream);
            ps.setLong(2, min);
            ps.setLong(3, max);
            ps.setString(4, stream);
            ps.setLong(5, min);
            ps.setLong(6, max);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    (rs.getString(1).equals("c") ? compensated : quarantined).add(new EntryId(rs.getLong(2), rs.getLong(3)));
                }
            }
        }
    }

    // ---- the fast path: a few statements per batch ----

    private boolean fast(Connection c, List<Step> steps) throws SQLException {
        List<JournalEntry> openings = new ArrayList<>();
        List<JournalEntry> entries = new ArrayList<>();
        Map<String, Long> deltas = new TreeMap<>(); // sorted: every writer locks accounts in one order
        List<Step> compensations = new ArrayList<>();
        List<Step> quarantine = new ArrayList<>();
        for (Step s : steps) {
            switch (s.action) {
                case APPLY -> {
                    if (s.entry.kind() == EntryKind.OPEN) {
                        openings.add(s.entry);
                    } else {
                        deltas.merge(s.entry.account(), s.entry.delta(), Long::sum);
                    }
                    entries.add(s.entry);
                }
                case COMPENSATE -> {
                    deltas.merge(s.entry.account(), s.entry.delta(), Long::sum);
                    compensations.add(s);
                }
                case QUARANTINE -> quarantine.add(s);
                default -> {
                }
            }
        }
        try {
            // Openings first: an account opened in this batch may be changed later in it.
            if (!openings.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement(INSERT_ACCOUNT)) {
                    for (JournalEntry e : openings) {
                        bindAccount(ps, e);
                        ps.addBatch();
                    }
                    ps.executeBatch();
                }
            }
            if (!applyDeltas(c, deltas)) {
                return false; // an unknown account: find it entry by entry
            }
            insertEntries(c, entries);
            if (!compensations.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement(INSERT_COMPENSATION)) {
                    for (Step s : compensations) {
                        bindCompensation(ps, s);
                        ps.addBatch();
                    }
                    ps.executeBatch();
                }
            }
            if (!quarantine.isEmpty()) {
                try (PreparedStatement ps = c.prepareStatement(INSERT_QUARANTINE)) {
                    for (Step s : quarantine) {
                        bindQuarantine(ps, s);
                        ps.addBatch();
                    }
                    ps.executeBatch();
                }
            }
            return true;
        } catch (SQLException e) {
            if (refused(e)) {
                return false;
            }
            throw e;
        }
    }

    /** One update per account with the sum of its changes; false when an account is unknown. */
    private boolean applyDeltas(Connection c, Map<String, Long> deltas) throws SQLException {
        if (deltas.isEmpty()) {
            return true;
        }
        if (dialect == Ledger.Dialect.POSTGRESQL) {
            try (PreparedStatement ps = c.prepareStatement("UPDATE ledger_accounts AS a SET balance = a.balance + d.delta,"
                    + " updated_at = CURRENT_TIMESTAMP FROM unnest(?::varchar[], ?::bigint[]) AS d(account, delta)"
                    + " WHERE a.account = d.account")) {
                ps.setArray(1, c.createArrayOf("varchar", deltas.keySet().toArray()));
                ps.setArray(2, c.createArrayOf("bigint", deltas.values().toArray()));
                return ps.executeUpdate() == deltas.size();
            }
        }
        try (PreparedStatement ps = c.prepareStatement(UPDATE_BALANCE)) {
            for (Map.Entry<String, Long> d : deltas.entrySet()) {
                ps.setLong(1, d.getValue());
                ps.setString(2, d.getKey());
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

    private void insertEntries(Connection c, List<JournalEntry> entries) throws SQLException {
        if (entries.isEmpty()) {
            return;
        }
        if (dialect == Ledger.Dialect.POSTGRESQL) {
            int n = entries.size();
            Object[] requests = new Object[n], accounts = new Object[n], kinds = new Object[n], amounts = new Object[n],
                    balances = new Object[n], tokens = new Object[n], streams = new Object[n], ids = new Object[n],
                    ms = new Object[n], seqs = new Object[n];
            for (int i = 0; i < n; i++) {
                JournalEntry e = entries.get(i);
                EntryId id = EntryId.parse(e.entryId());
                requests[i] = e.requestId();
                accounts[i] = e.account();
                kinds[i] = e.kind().wireName();
                amounts[i] = e.amount();
                balances[i] = e.balanceAfter();
                tokens[i] = e.token().isPresent() ? e.token().getAsLong() : null;
                streams[i] = e.stream();
                ids[i] = e.entryId();
                ms[i] = id.ms();
                seqs[i] = id.seq();
            }
            // One fixed statement whatever the batch size, so the server plans it once.
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger_entries (request_id, account, kind, amount,"
                    + " balance_after, token, stream, entry_id, entry_ms, entry_seq) SELECT * FROM unnest(?::varchar[],"
                    + " ?::varchar[], ?::varchar[], ?::bigint[], ?::bigint[], ?::bigint[], ?::varchar[], ?::varchar[],"
                    + " ?::bigint[], ?::bigint[])")) {
                ps.setArray(1, c.createArrayOf("varchar", requests));
                ps.setArray(2, c.createArrayOf("varchar", accounts));
                ps.setArray(3, c.createArrayOf("varchar", kinds));
                ps.setArray(4, c.createArrayOf("bigint", amounts));
                ps.setArray(5, c.createArrayOf("bigint", balances));
                ps.setArray(6, c.createArrayOf("bigint", tokens));
                ps.setArray(7, c.createArrayOf("varchar", streams));
                ps.setArray(8, c.createArrayOf("varchar", ids));
                ps.setArray(9, c.createArrayOf("bigint", ms));
                ps.setArray(10, c.createArrayOf("bigint", seqs));
                ps.executeUpdate();
            }
            return;
        }
        for (int from = 0; from < entries.size(); from += CHUNK) {
            List<JournalEntry> chunk = entries.subList(from, Math.min(entries.size(), from + CHUNK));
            String sql = INSERT_ENTRY_HEAD + (ENTRY_ROW + ", ").repeat(chunk.size() - 1) + ENTRY_ROW;
            try (PreparedStatement ps = c.prepareStatement(sql)) {
                int offset = 0;
                for (JournalEntry e : chunk) {
                    bindEntry(ps, offset, e);
                    offset += ENTRY_COLUMNS;
                }
                ps.executeUpdate();
            }
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
                    try (PreparedStatement ps = c.prepareStatement(INSERT_ACCOUNT)) {
                        bindAccount(ps, s.entry);
                        ps.executeUpdate();
                    }
                } else {
                    try (PreparedStatement ps = c.prepareStatement(UPDATE_BALANCE)) {
                        bindBalance(ps, s.entry);
                        if (ps.executeUpdate() == 0) {
                            c.rollback(savepoint);
                            s.quarantine(QuarantineReason.UNKNOWN_ACCOUNT, "the ledger has no account '"
                                    + s.entry.account() + "'");
                            continue;
                        }
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(s.action == Action.APPLY ? INSERT_ENTRY : INSERT_COMPENSATION)) {
                    if (s.action == Action.APPLY) {
                        bindEntry(ps, 0, s.entry);
                    } else {
                        bindCompensation(ps, s);
                    }
                    ps.executeUpdate();
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
        List<Step> refused = steps.stream().filter(s -> s.action == Action.QUARANTINE).toList();
        if (!refused.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(INSERT_QUARANTINE)) {
                for (Step s : refused) {
                    bindQuarantine(ps, s);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
        }
    }

    private static QuarantineReason reason(Step s, SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        String message = String.valueOf(e.getMessage()).toLowerCase(java.util.Locale.ROOT);
        if (state.equals("23505") && s.entry.kind() == EntryKind.OPEN) {
            return QuarantineReason.ACCOUNT_EXISTS;
        }
        // PostgreSQL: 23514 check_violation; H2: 23513 CHECK_CONSTRAINT_VIOLATED.
        if ((state.equals("23514") || state.equals("23513")) && message.contains("balance_non_negative")) {
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

    // ---- binding ----

    private static void bindAccount(PreparedStatement ps, JournalEntry e) throws SQLException {
        ps.setString(1, e.account());
        ps.setLong(2, e.amount());
    }

    private static void bindBalance(PreparedStatement ps, JournalEntry e) throws SQLException {
        ps.setLong(1, e.delta());
        ps.setString(2, e.account());
    }

    private static void bindEntry(PreparedStatement ps, int offset, JournalEntry e) throws SQLException {
        EntryId id = EntryId.parse(e.entryId());
        ps.setString(offset + 1, e.requestId());
        ps.setString(offset + 2, e.account());
        ps.setString(offset + 3, e.kind().wireName());
        ps.setLong(offset + 4, e.amount());
        ps.setLong(offset + 5, e.balanceAfter());
        if (e.token().isPresent()) {
            ps.setLong(offset + 6, e.token().getAsLong());
        } else {
            ps.setNull(offset + 6, Types.BIGINT);
        }
        ps.setString(offset + 7, e.stream());
        ps.setString(offset + 8, e.entryId());
        ps.setLong(offset + 9, id.ms());
        ps.setLong(offset + 10, id.seq());
    }

    private static void bindCompensation(PreparedStatement ps, Step s) throws SQLException {
        JournalEntry e = s.entry;
        ps.setString(1, e.stream());
        ps.setString(2, e.entryId());
        ps.setLong(3, s.position.ms());
        ps.setLong(4, s.position.seq());
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
        ps.setString(11, s.compensationRequestId());
        ps.setString(12, s.compensationKind().wireName());
    }

    private void bindQuarantine(PreparedStatement ps, Step s) throws SQLException {
        Map<String, String> f = s.raw.fields();
        ps.setString(1, stream);
        ps.setString(2, s.raw.id());
        ps.setLong(3, s.position.ms());
        ps.setLong(4, s.position.seq());
        ps.setString(5, f.get("account"));
        ps.setString(6, f.get("kind"));
        setLongOrNull(ps, 7, f.get("amount"));
        ps.setString(8, f.get("request"));
        setLongOrNull(ps, 9, f.get("balance"));
        ps.setString(10, Ledger.encodeFields(f));
        ps.setString(11, s.reason.name());
        ps.setString(12, s.detail);
    }

    private static void setLongOrNull(PreparedStatement ps, int index, String text) throws SQLException {
        try {
            ps.setLong(index, Long.parseLong(text));
        } catch (NumberFormatException | NullPointerException e) {
            ps.setNull(index, Types.BIGINT);
        }
    }

    /** Records Redis's answer to a compensation; best effort (the compensation's own journal entry is the durable record). */
    static void recordOutcome(Connection c, String stream, EntryId position, String outcome) throws SQLException {
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
