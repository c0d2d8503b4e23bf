package dev.warden.quota.ledger.internal.reconcile;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.journal.JournalTail.Change;
import dev.warden.quota.ledger.journal.JournalEntry;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The database's side of a comparison ({@link AccountComparison}): balances, held quota, named balances, and
 * the rows persisted from a journal position on, each read inside the comparison's one repeatable-read
 * transaction so that they are figures of one moment.
 */
public final class LedgerFigures {

    private LedgerFigures() {
    }

    /**
     * The database's rows of the group's accounts in this stream from {@code window} on: their positions
     * (persisted), and per account those appended after the snapshot. A row counts as appended after it
     * when its id is beyond the snapshot's last id and it was either seen in the stream just after, or
     * stamped at or after the snapshot's time: a row of an earlier life of the stream (before Redis lost
     * its data) is neither.
     */
    static void persistedSince(Connection c, String stream, List<String> accounts, EntryId window, EntryId last,
                                       long snapshotMs, Set<EntryId> appended, Set<EntryId> persisted,
                                       Map<String, List<Change>> afterSnapshot) throws SQLException {
        String in = "?, ".repeat(accounts.size() - 1) + "?";
        for (String table : List.of("ledger_entries", "ledger_compensations")) {
            try (PreparedStatement ps = c.prepareStatement("SELECT account, kind, amount, entry_ms, entry_seq, request_id FROM "
                    + table + " WHERE stream = ? AND entry_ms >= ? AND account IN (" + in + ")")) {
                ps.setString(1, stream);
                ps.setLong(2, window.ms());
                for (int i = 0; i < accounts.size(); i++) {
                    ps.setString(3 + i, accounts.get(i));
                }
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        EntryId id = new EntryId(rs.getLong(4), rs.getLong(5));
                        persisted.add(id);
                        if (id.compareTo(last) > 0 && (appended.contains(id) || Long.compareUnsigned(id.ms(), snapshotMs) >= 0)) {
                            String account = rs.getString(1);
                            EntryKind kind = EntryKind.fromWireName(rs.getString(2));
                            long amount = rs.getLong(3);
                            SortedMap<String, Long> lines = kind == EntryKind.POST && table.equals("ledger_entries")
                                    ? postingLines(c, account, rs.getString(6)) : new TreeMap<>();
                            afterSnapshot.computeIfAbsent(account, k -> new ArrayList<>()).add(
                                    new Change(account, kind, JournalEntry.totalDelta(kind, amount), amount, id, lines));
                        }
                    }
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT entry_ms, entry_seq FROM ledger_quarantine"
                + " WHERE stream = ? AND entry_ms >= ?")) {
            ps.setString(1, stream);
            ps.setLong(2, window.ms());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    persisted.add(new EntryId(rs.getLong(1), rs.getLong(2)));
                }
            }
        }
    }

    /** What each account holds. */
    static Map<String, Long> held(Connection c, List<String> accounts) throws SQLException {
        Map<String, Long> held = new HashMap<>();
        forAccounts(c, "SELECT account, held FROM ledger_accounts", accounts, rs -> held.put(rs.getString(1), rs.getLong(2)));
        return held;
    }

    /** Each account's named balances by name (an account without any is absent). */
    static Map<String, Map<String, Long>> namedBalances(Connection c, List<String> accounts) throws SQLException {
        Map<String, Map<String, Long>> named = new HashMap<>();
        forAccounts(c, "SELECT account, name, amount FROM ledger_balances", accounts,
                rs -> named.computeIfAbsent(rs.getString(1), k -> new TreeMap<>()).put(rs.getString(2), rs.getLong(3)));
        return named;
    }

    static SortedMap<String, Long> postingLines(Connection c, String account, String requestId) throws SQLException {
        SortedMap<String, Long> lines = new TreeMap<>();
        try (PreparedStatement ps = c.prepareStatement("SELECT name, delta FROM ledger_posting_lines"
                + " WHERE account = ? AND request_id = ?")) {
            ps.setString(1, account);
            ps.setString(2, requestId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    lines.put(rs.getString(1), rs.getLong(2));
                }
            }
        }
        return lines;
    }

    /** Each account's balance as reconciliation compares it: available + held. */
    static Map<String, Long> balances(Connection c, List<String> accounts) throws SQLException {
        Map<String, Long> balances = new HashMap<>();
        forAccounts(c, "SELECT account, balance + held FROM ledger_accounts", accounts,
                rs -> balances.put(rs.getString(1), rs.getLong(2)));
        return balances;
    }

    /** A keyset page of the ledger's accounts after {@code after}, in key order. */
    public static List<String> accountsAfter(Connection c, String after, int page) throws SQLException {
        List<String> found = new ArrayList<>(page);
        try (PreparedStatement ps = c.prepareStatement("SELECT account FROM ledger_accounts WHERE account > ?"
                + " ORDER BY account LIMIT " + page)) {
            ps.setString(1, after);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    found.add(rs.getString(1));
                }
            }
        }
        return found;
    }

    /** Which of these accounts the ledger holds. */
    public static Set<String> existing(Connection c, List<String> accounts) throws SQLException {
        Set<String> found = new HashSet<>();
        forAccounts(c, "SELECT account FROM ledger_accounts", accounts, rs -> found.add(rs.getString(1)));
        return found;
    }

    private interface Row {
        void read(ResultSet rs) throws SQLException;
    }

    /** Runs {@code select} restricted to the accounts ({@code WHERE account IN (...)}), handing over each row. */
    private static void forAccounts(Connection c, String select, List<String> accounts, Row row) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(select + " WHERE account IN (" + "?, ".repeat(accounts.size() - 1) + "?)")) {
            for (int i = 0; i < accounts.size(); i++) {
                ps.setString(1 + i, accounts.get(i));
            }
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    row.read(rs);
                }
            }
        }
    }
}
