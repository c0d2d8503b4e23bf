package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The ledger's schema and its quarantine, for operators and tests.
 *
 * <p>Tables ({@code src/main/resources/dev/warden/quota/ledger/postgresql.sql} and {@code h2.sql}
 * say the rest): {@code ledger_accounts} (account, balance {@code CHECK (balance >= 0)}),
 * {@code ledger_entries} (request id primary key, one row per applied journal entry),
 * {@code ledger_compensations} (replays of expired request ids and how they were undone) and
 * {@code ledger_quarantine} (entries the database refused). Nothing in Warden creates them unless
 * asked: {@link #createSchema(DataSource)}, or the CLI's {@code schema --create}; or apply
 * {@link #schemaSql(Dialect)} yourself.
 */
public final class Ledger {

    /** The ledger's tables, in creation order. */
    public static final List<String> TABLES = List.of("ledger_accounts", "ledger_entries", "ledger_compensations",
            "ledger_quarantine");

    /** The databases the schema is written for. */
    public enum Dialect {
        /** Production, and what CI tests against. */
        POSTGRESQL("postgresql.sql"),
        /** The demo's embedded default; tested too. */
        H2("h2.sql");

        private final String resource;

        Dialect(String resource) {
            this.resource = resource;
        }

        /** The dialect of the database behind {@code connection}. */
        public static Dialect of(Connection connection) throws SQLException {
            String product = connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
            if (product.contains("postgresql")) {
                return POSTGRESQL;
            }
            if (product.contains("h2")) {
                return H2;
            }
            throw new QuotaException(Reason.SCHEMA, "the ledger supports PostgreSQL and H2, not "
                    + connection.getMetaData().getDatabaseProductName());
        }
    }

    private Ledger() {
    }

    /** The schema script for {@code dialect}, as shipped (comments included). */
    public static String schemaSql(Dialect dialect) {
        String path = "/dev/warden/quota/ledger/" + dialect.resource;
        try (InputStream in = Ledger.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The statements of {@link #schemaSql(Dialect)}, comments removed. */
    public static List<String> schemaStatements(Dialect dialect) {
        List<String> statements = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : schemaSql(dialect).split("\n")) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("--")) {
                continue;
            }
            current.append(line).append('\n');
            if (trimmed.endsWith(";")) {
                String s = current.toString().strip();
                statements.add(s.substring(0, s.length() - 1));
                current.setLength(0);
            }
        }
        return statements;
    }

    /**
     * Creates the ledger's tables when they are missing, in one transaction (every statement is
     * {@code IF NOT EXISTS}; nothing is altered or dropped).
     *
     * @throws QuotaException {@link Reason#DATABASE} when the database fails
     */
    public static void createSchema(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            Dialect dialect = Dialect.of(c);
            boolean auto = c.getAutoCommit();
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                for (String sql : schemaStatements(dialect)) {
                    s.execute(sql);
                }
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(auto);
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not create the ledger schema: " + e.getMessage(), e);
        }
    }

    /**
     * Checks that every ledger table is there (a query of each, reading no rows).
     *
     * @throws QuotaException {@link Reason#SCHEMA} naming the missing tables, or {@link Reason#DATABASE}
     */
    public static void verifySchema(DataSource dataSource) {
        List<String> missing = new ArrayList<>();
        try (Connection c = dataSource.getConnection()) {
            for (String table : TABLES) {
                boolean auto = c.getAutoCommit();
                try (Statement s = c.createStatement()) {
                    s.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
                } catch (SQLException e) {
                    if (e.getSQLState() == null || !e.getSQLState().startsWith("42")) {
                        throw e;
                    }
                    missing.add(table);
                    if (!auto) {
                        c.rollback();
                    }
                }
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not check the ledger schema: " + e.getMessage(), e);
        }
        if (!missing.isEmpty()) {
            throw new QuotaException(Reason.SCHEMA, "the ledger tables " + missing + " are missing: create them with"
                    + " Ledger.createSchema(dataSource), the CLI's 'schema --create', or by applying Ledger.schemaSql");
        }
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
                result.add(new QuarantinedEntry(rs.getString(1), rs.getString(2), decodeFields(rs.getString(3)),
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
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(
                "UPDATE ledger_quarantine SET resolved_at = CURRENT_TIMESTAMP, resolution = ? WHERE stream = ?"
                        + " AND entry_id = ? AND resolved_at IS NULL")) {
            ps.setString(1, resolution);
            ps.setString(2, stream);
            ps.setString(3, entryId);
            int n = ps.executeUpdate();
            if (!c.getAutoCommit()) {
                c.commit();
            }
            return n > 0;
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not resolve a quarantined entry: " + e.getMessage(), e);
        }
    }

    /** Fields as stored: one {@code name=value} per line, values with {@code \}, newline escaped. */
    static String encodeFields(Map<String, String> fields) {
        StringBuilder b = new StringBuilder();
        fields.forEach((k, v) -> b.append(escape(k)).append('=').append(escape(v)).append('\n'));
        return b.toString();
    }

    static Map<String, String> decodeFields(String text) {
        Map<String, String> fields = new LinkedHashMap<>();
        if (text == null) {
            return fields;
        }
        for (String line : text.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                fields.put(unescape(line.substring(0, eq)), unescape(line.substring(eq + 1)));
            }
        }
        return fields;
    }

    private static String escape(String s) {
        return s == null ? "" : s.replace("\\", "\\\\").replace("\n", "\\n").replace("=", "\\e");
    }

    private static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                char n = s.charAt(++i);
                b.append(n == 'n' ? '\n' : n == 'e' ? '=' : n);
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
