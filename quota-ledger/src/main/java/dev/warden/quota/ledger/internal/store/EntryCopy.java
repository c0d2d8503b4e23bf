package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.journal.JournalEntry;
import org.postgresql.PGConnection;
import org.postgresql.copy.CopyIn;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * A batch's entries into {@code ledger_entries} as one {@code COPY ... FROM STDIN} through PgJDBC's copy
 * API: no statement to plan, no arrays to build and take apart, and the server inserts the rows several
 * to a page. The table's keys still hold: a key or position the table already has fails the whole COPY
 * with SQLSTATE 23505, as an insert would. Loaded only when PgJDBC is present ({@link EntryRows}).
 */
final class EntryCopy {

    private static final String COPY = "COPY ledger_entries (request_id, account, kind, amount, balance_after, token,"
            + " stream, entry_id, entry_ms, entry_seq) FROM STDIN";

    /** By ordinal: {@link EntryKind#wireName} makes a new string each time. */
    private static final String[] WIRE_NAMES = java.util.Arrays.stream(EntryKind.values()).map(EntryKind::wireName)
            .toArray(String[]::new);

    private EntryCopy() {
    }

    /** Whether the connection is PgJDBC's (possibly behind a pool's proxy). */
    static boolean applies(Connection c) throws SQLException {
        return c.isWrapperFor(PGConnection.class);
    }

    static void insertAll(Connection c, List<JournalEntry> entries, List<EntryId> positions) throws SQLException {
        byte[] rows = text(entries, positions);
        CopyIn copy = c.unwrap(PGConnection.class).getCopyAPI().copyIn(COPY);
        try {
            copy.writeToCopy(rows, 0, rows.length);
            copy.endCopy();
        } catch (SQLException | RuntimeException e) {
            // The server's refusal (its SQLSTATE) is what the writer reads: cancelling must not replace it.
            if (copy.isActive()) {
                try {
                    copy.cancelCopy();
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }

    /** The rows in COPY's text format: tab between columns, a line per row, {@code \N} for NULL. */
    private static byte[] text(List<JournalEntry> entries, List<EntryId> positions) {
        StringBuilder text = new StringBuilder(entries.size() * 112);
        for (int i = 0; i < entries.size(); i++) {
            JournalEntry e = entries.get(i);
            EntryId id = positions.get(i);
            value(text, e.requestId()).append('\t');
            value(text, e.account()).append('\t');
            text.append(WIRE_NAMES[e.kind().ordinal()]).append('\t');
            text.append(e.amount()).append('\t');
            text.append(e.balanceAfter()).append('\t');
            if (e.token().isPresent()) {
                text.append(e.token().getAsLong());
            } else {
                text.append("\\N");
            }
            text.append('\t');
            value(text, e.stream()).append('\t');
            value(text, e.entryId()).append('\t');
            text.append(id.ms()).append('\t').append(id.seq()).append('\n');
        }
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** A text value with backslash, tab, newline and carriage return escaped (ids allow a backslash). */
    private static StringBuilder value(StringBuilder text, String value) {
        if (plain(value)) {
            return text.append(value);
        }
        for (int i = 0; i < value.length(); i++) {
            char ch = value.charAt(i);
            switch (ch) {
                case '\\' -> text.append("\\\\");
                case '\t' -> text.append("\\t");
                case '\n' -> text.append("\\n");
                case '\r' -> text.append("\\r");
                default -> text.append(ch);
            }
        }
        return text;
    }

    /** Nothing to escape: the common case, found with the JDK's vectorised searches. */
    private static boolean plain(String value) {
        return value.indexOf('\\') < 0 && value.indexOf('\t') < 0 && value.indexOf('\n') < 0 && value.indexOf('\r') < 0;
    }
}
