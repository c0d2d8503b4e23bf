package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.store.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.List;

/**
 * Inserts a batch's entries into {@code ledger_entries}. On PostgreSQL through PgJDBC, one {@code COPY}
 * ({@code EntryCopy}). Elsewhere, one JDBC batch of one prepared insert (one statement to parse
 * on H2); on PostgreSQL behind a driver that is not PgJDBC, one insert over arrays.
 */
public final class EntryRows {

    private static final String COLUMNS = "request_id, account, kind, amount, balance_after, token, stream, entry_id,"
            + " entry_ms, entry_seq";
    private static final String INSERT = "INSERT INTO ledger_entries (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    private static final String INSERT_FROM_ARRAYS = "INSERT INTO ledger_entries (" + COLUMNS + ") SELECT * FROM"
            + " unnest(?::varchar[], ?::varchar[], ?::varchar[], ?::bigint[], ?::bigint[], ?::bigint[], ?::varchar[],"
            + " ?::varchar[], ?::bigint[], ?::bigint[])";

    /** Whether PgJDBC is on the class path: {@code EntryCopy} needs it, and is not loaded without it. */
    private static final boolean PGJDBC = present("org.postgresql.PGConnection");

    private final Dialect dialect;

    public EntryRows(Dialect dialect) {
        this.dialect = dialect;
    }

    /** @param positions each entry's position in its stream (its id, parsed), in the same order */
    public void insertAll(Connection c, List<JournalEntry> entries, List<EntryId> positions) throws SQLException {
        if (entries.isEmpty()) {
            return;
        }
        if (dialect == Dialect.POSTGRESQL && PGJDBC && EntryCopy.applies(c)) {
            EntryCopy.insertAll(c, entries, positions);
        } else if (dialect == Dialect.POSTGRESQL) {
            insertFromArrays(c, entries, positions);
        } else {
            insertBatch(c, entries, positions);
        }
    }

    /** One entry (the entry-by-entry replay, under the entry's savepoint). */
    public void insert(Connection c, JournalEntry e) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            bind(ps, e, EntryId.parse(e.entryId()));
            ps.executeUpdate();
        }
    }

    private static void insertBatch(Connection c, List<JournalEntry> entries, List<EntryId> positions) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(INSERT)) {
            for (int i = 0; i < entries.size(); i++) {
                bind(ps, entries.get(i), positions.get(i));
                ps.addBatch();
            }
            ps.executeBatch();
        }
    }

    private static void insertFromArrays(Connection c, List<JournalEntry> entries, List<EntryId> positions)
            throws SQLException {
        int n = entries.size();
        Object[] requests = new Object[n], accounts = new Object[n], kinds = new Object[n], amounts = new Object[n],
                balances = new Object[n], tokens = new Object[n], streams = new Object[n], ids = new Object[n],
                ms = new Object[n], seqs = new Object[n];
        for (int i = 0; i < n; i++) {
            JournalEntry e = entries.get(i);
            EntryId id = positions.get(i);
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
        try (PreparedStatement ps = c.prepareStatement(INSERT_FROM_ARRAYS)) {
            SqlArrays.bind(c, ps, new String[]{"varchar", "varchar", "varchar", "bigint", "bigint", "bigint", "varchar", "varchar",
                    "bigint", "bigint"}, requests, accounts, kinds, amounts, balances, tokens, streams, ids, ms, seqs);
            ps.executeUpdate();
        }
    }

    private static boolean present(String className) {
        try {
            Class.forName(className, false, EntryRows.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    private static void bind(PreparedStatement ps, JournalEntry e, EntryId id) throws SQLException {
        ps.setString(1, e.requestId());
        ps.setString(2, e.account());
        ps.setString(3, e.kind().wireName());
        ps.setLong(4, e.amount());
        ps.setLong(5, e.balanceAfter());
        if (e.token().isPresent()) {
            ps.setLong(6, e.token().getAsLong());
        } else {
            ps.setNull(6, Types.BIGINT);
        }
        ps.setString(7, e.stream());
        ps.setString(8, e.entryId());
        ps.setLong(9, id.ms());
        ps.setLong(10, id.seq());
    }
}
