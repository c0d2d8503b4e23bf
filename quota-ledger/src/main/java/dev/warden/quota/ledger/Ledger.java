package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;

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
 * <p>Tables (the migrations under {@code dev/warden/quota/ledger/migration/<dialect>/} say the rest):
 * {@code ledger_accounts} (account, balance {@code CHECK (balance >= 0)}, held {@code CHECK (held >= 0)}), {@code ledger_balances} (account, name, amount {@code CHECK (amount >= 0)}: named
 * balances), {@code ledger_posting_lines} (each posting's lines), {@code ledger_entries}
 * (one row per applied journal entry, keyed by (account, request id)), {@code ledger_compensations}
 * (replays of expired request ids and how they were undone), {@code ledger_quarantine} (entries the
 * database refused) and {@code ledger_partitions} (each partition's owner and fencing token).
 *
 * <p>The schema is versioned: {@link #migrate(DataSource)} (or the CLI's {@code schema --migrate})
 * applies what is missing with Flyway, recording each version in {@value #HISTORY_TABLE}. A ledger
 * created before migrations existed is recognised by its tables and recorded as version 1 without
 * running it. Nothing in Warden migrates behind your back: the consumer and the reconciler refuse a
 * database whose schema is missing or behind ({@link #verifySchema}).
 */
public final class Ledger {

    /** The ledger's tables, in creation order. */
    public static final List<String> TABLES = List.of("ledger_accounts", "ledger_entries", "ledger_compensations",
            "ledger_quarantine", "ledger_partitions", "ledger_balances", "ledger_posting_lines", "ledger_holds");

    /** Where Flyway records the applied versions (a table of Warden's own, so it never meets yours). */
    public static final String HISTORY_TABLE = "warden_ledger_schema_history";

    /** The databases the schema is written for. */
    public enum Dialect {
        /** Production, and what CI tests against. */
        POSTGRESQL("postgresql"),
        /** The demo's embedded default; tested too. */
        H2("h2");

        private final String folder;

        Dialect(String folder) {
            this.folder = folder;
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

        /** Migrations both dialects share (written in SQL both accept), then the dialect's own. */
        String[] locations() {
            return new String[]{"classpath:dev/warden/quota/ledger/migration/common",
                    "classpath:dev/warden/quota/ledger/migration/" + folder};
        }
    }

    private Ledger() {
    }

    /** The migration scripts of {@code dialect} in version order, as shipped (comments included). */
    public static String schemaSql(Dialect dialect) {
        StringBuilder b = new StringBuilder();
        for (String name : MIGRATIONS) {
            String path = "/dev/warden/quota/ledger/migration/" + (COMMON.contains(name) ? "common" : dialect.folder) + "/" + name;
            try (InputStream in = Ledger.class.getResourceAsStream(path)) {
                if (in == null) {
                    throw new IllegalStateException("missing resource " + path);
                }
                b.append("-- ").append(name).append('\n').append(new String(in.readAllBytes(), StandardCharsets.UTF_8))
                        .append('\n');
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return b.toString();
    }

    /** The migrations both dialects share (the folder {@code common}). */
    static final List<String> COMMON = List.of("V1__baseline.sql", "V3__holds.sql", "V4__named_balances.sql", "V5__bucket_moves.sql",
            "V6__recovery.sql");

    /** The migration files, in order; a test checks that the folders hold exactly these. */
    static final List<String> MIGRATIONS = List.of("V1__baseline.sql",
            "V2__per_account_request_ids_and_partition_fences.sql", "V3__holds.sql", "V4__named_balances.sql", "V5__bucket_moves.sql",
            "V6__recovery.sql");

    /**
     * Brings the schema up to date: applies every missing migration, each in its own transaction.
     * Safe to run from several processes at once (Flyway locks its history table).
     *
     * @return the schema version afterwards
     * @throws QuotaException {@link Reason#DATABASE} when the database fails or a migration is refused
     */
    public static String migrate(DataSource dataSource) {
        try {
            Flyway flyway = flyway(dataSource);
            flyway.migrate();
            return String.valueOf(flyway.info().current().getVersion());
        } catch (FlywayException e) {
            throw new QuotaException(Reason.DATABASE, "could not migrate the ledger schema: " + e.getMessage(), e);
        }
    }

    /**
     * Checks that the schema is present and current.
     *
     * @throws QuotaException {@link Reason#SCHEMA} naming the missing tables or the pending versions, or
     *         {@link Reason#DATABASE}
     */
    public static void verifySchema(DataSource dataSource) {
        List<String> missing = new ArrayList<>();
        try (Connection c = dataSource.getConnection()) {
            for (String table : TABLES) {
                if (!tableExists(c, table)) {
                    missing.add(table);
                }
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not check the ledger schema: " + e.getMessage(), e);
        }
        if (!missing.isEmpty()) {
            throw new QuotaException(Reason.SCHEMA, "the ledger tables " + missing + " are missing: bring the schema"
                    + " up to date with Ledger.migrate(dataSource) or the CLI's 'schema --migrate'");
        }
        MigrationInfo[] pending;
        try {
            pending = flyway(dataSource).info().pending();
        } catch (FlywayException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's schema history: " + e.getMessage(), e);
        }
        if (pending.length > 0) {
            List<String> versions = new ArrayList<>();
            for (MigrationInfo m : pending) {
                versions.add(m.getVersion() + " (" + m.getDescription() + ")");
            }
            throw new QuotaException(Reason.SCHEMA, "the ledger schema is behind: versions " + versions + " are not"
                    + " applied; run Ledger.migrate(dataSource) or the CLI's 'schema --migrate'");
        }
    }

    private static Flyway flyway(DataSource dataSource) {
        Dialect dialect;
        boolean legacy;
        try (Connection c = dataSource.getConnection()) {
            dialect = Dialect.of(c);
            // A ledger made by the one-shot script of the first release: its tables exist, without history.
            legacy = tableExists(c, "ledger_entries") && !tableExists(c, HISTORY_TABLE);
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not inspect the ledger database: " + e.getMessage(), e);
        }
        return Flyway.configure(Ledger.class.getClassLoader())
                .dataSource(dataSource)
                .locations(dialect.locations())
                .table(HISTORY_TABLE)
                // Our own history table: a schema shared with other tables is not "non-empty" to us.
                .baselineOnMigrate(true)
                .baselineVersion(legacy ? "1" : "0")
                .baselineDescription(legacy ? "ledger created before migrations" : "empty")
                .load();
    }

    private static boolean tableExists(Connection c, String table) throws SQLException {
        boolean auto = c.getAutoCommit();
        try (Statement s = c.createStatement()) {
            s.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
            return true;
        } catch (SQLException e) {
            if (e.getSQLState() == null || !e.getSQLState().startsWith("42")) {
                throw e;
            }
            if (!auto) {
                c.rollback();
            }
            return false;
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
        return markResolved(dataSource, "ledger_quarantine", "", stream, entryId, resolution, "a quarantined entry");
    }

    /**
     * The compensations Redis refused, oldest first (see {@link RefusedCompensation}).
     *
     * @param unresolvedOnly leave out those marked resolved
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static List<RefusedCompensation> refusedCompensations(DataSource dataSource, boolean unresolvedOnly) {
        String sql = "SELECT stream, entry_id, account, kind, amount, request_id, compensation_request_id, outcome,"
                + " recorded_at, resolved_at FROM ledger_compensations WHERE outcome IS NOT NULL AND outcome NOT IN"
                + " ('APPLIED', 'DUPLICATE')" + (unresolvedOnly ? " AND resolved_at IS NULL" : "")
                + " ORDER BY recorded_at, stream, entry_ms, entry_seq";
        List<RefusedCompensation> result = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                Timestamp resolved = rs.getTimestamp(10);
                result.add(new RefusedCompensation(rs.getString(1), rs.getString(2), rs.getString(3),
                        dev.warden.quota.EntryKind.fromWireName(rs.getString(4)), rs.getLong(5), rs.getString(6),
                        rs.getString(7), rs.getString(8), rs.getTimestamp(9).toInstant(),
                        Optional.ofNullable(resolved).map(Timestamp::toInstant)));
            }
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not read the ledger's compensations: " + e.getMessage(), e);
        }
        return result;
    }

    /**
     * Marks a refused compensation resolved (after a person settled the replay), keeping it.
     *
     * @return whether an unresolved refused compensation was found and marked
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static boolean resolveCompensation(DataSource dataSource, String stream, String entryId, String resolution) {
        return markResolved(dataSource, "ledger_compensations",
                " AND outcome IS NOT NULL AND outcome NOT IN ('APPLIED', 'DUPLICATE')", stream, entryId, resolution, "a compensation");
    }

    /** Marks one unresolved row of a table a person resolves (the row stays), and says whether there was one. */
    private static boolean markResolved(DataSource dataSource, String table, String condition, String stream, String entryId,
                                        String resolution, String what) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement("UPDATE " + table
                + " SET resolved_at = CURRENT_TIMESTAMP, resolution = ? WHERE stream = ? AND entry_id = ? AND resolved_at IS NULL"
                + condition)) {
            ps.setString(1, resolution);
            ps.setString(2, stream);
            ps.setString(3, entryId);
            int n = ps.executeUpdate();
            if (!c.getAutoCommit()) {
                c.commit();
            }
            return n > 0;
        } catch (SQLException e) {
            throw new QuotaException(Reason.DATABASE, "could not resolve " + what + ": " + e.getMessage(), e);
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
