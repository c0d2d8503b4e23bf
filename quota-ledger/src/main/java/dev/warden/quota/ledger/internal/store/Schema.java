package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.store.Dialect;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.FlywayException;
import org.flywaydb.core.api.MigrationInfo;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The ledger's versioned schema: the shipped migrations, Flyway over Warden's own history table, and the
 * check the consumer and the reconciler make before they touch the database.
 */
public final class Schema {

    /** The ledger's tables, in creation order. */
    public static final List<String> TABLES = List.of("ledger_accounts", "ledger_entries", "ledger_compensations",
            "ledger_quarantine", "ledger_partitions", "ledger_balances", "ledger_posting_lines", "ledger_holds");

    /** Where Flyway records the applied versions (a table of Warden's own, so it never meets yours). */
    public static final String HISTORY_TABLE = "warden_ledger_schema_history";

    private Schema() {
    }

    /** The migration scripts of {@code dialect} in version order, as shipped (comments included). */
    public static String sql(Dialect dialect) {
        StringBuilder b = new StringBuilder();
        for (String name : MIGRATIONS) {
            String path = "/dev/warden/quota/ledger/migration/" + (COMMON.contains(name) ? "common" : dialect.folder()) + "/" + name;
            try (InputStream in = Schema.class.getResourceAsStream(path)) {
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
    public static final List<String> COMMON = List.of("V1__baseline.sql", "V3__holds.sql", "V4__named_balances.sql", "V5__bucket_moves.sql",
            "V6__recovery.sql", "V7__entry_position_by_time.sql");

    /** The migration files, in order; a test checks that the folders hold exactly these. */
    public static final List<String> MIGRATIONS = List.of("V1__baseline.sql",
            "V2__per_account_request_ids_and_partition_fences.sql", "V3__holds.sql", "V4__named_balances.sql", "V5__bucket_moves.sql",
            "V6__recovery.sql", "V7__entry_position_by_time.sql");

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
    public static void verify(DataSource dataSource) {
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
        return Flyway.configure(Schema.class.getClassLoader())
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
}
