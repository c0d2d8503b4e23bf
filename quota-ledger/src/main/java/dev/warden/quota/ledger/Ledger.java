package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.internal.store.ReviewRows;
import dev.warden.quota.ledger.internal.store.Schema;
import dev.warden.quota.ledger.journal.QuarantinedEntry;
import dev.warden.quota.ledger.journal.RefusedCompensation;
import dev.warden.quota.ledger.store.Dialect;

import javax.sql.DataSource;
import java.util.List;

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
    public static final List<String> TABLES = Schema.TABLES;

    /** Where Flyway records the applied versions (a table of Warden's own, so it never meets yours). */
    public static final String HISTORY_TABLE = Schema.HISTORY_TABLE;

    private Ledger() {
    }

    /** The migration scripts of {@code dialect} in version order, as shipped (comments included). */
    public static String schemaSql(Dialect dialect) {
        return Schema.sql(dialect);
    }

    /**
     * Brings the schema up to date: applies every missing migration, each in its own transaction.
     * Safe to run from several processes at once (Flyway locks its history table).
     *
     * @return the schema version afterwards
     * @throws QuotaException {@link Reason#DATABASE} when the database fails or a migration is refused
     */
    public static String migrate(DataSource dataSource) {
        return Schema.migrate(dataSource);
    }

    /**
     * Checks that the schema is present and current.
     *
     * @throws QuotaException {@link Reason#SCHEMA} naming the missing tables or the pending versions, or
     *         {@link Reason#DATABASE}
     */
    public static void verifySchema(DataSource dataSource) {
        Schema.verify(dataSource);
    }

    /**
     * The quarantined entries, oldest first.
     *
     * @param unresolvedOnly leave out those marked resolved
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static List<QuarantinedEntry> quarantine(DataSource dataSource, boolean unresolvedOnly) {
        return ReviewRows.quarantine(dataSource, unresolvedOnly);
    }

    /**
     * Marks a quarantined entry resolved (after a person fixed the balance, for example), keeping it.
     *
     * @return whether an unresolved entry was found and marked
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static boolean resolveQuarantined(DataSource dataSource, String stream, String entryId, String resolution) {
        return ReviewRows.resolveQuarantined(dataSource, stream, entryId, resolution);
    }

    /**
     * The compensations Redis refused, oldest first (see {@link RefusedCompensation}).
     *
     * @param unresolvedOnly leave out those marked resolved
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static List<RefusedCompensation> refusedCompensations(DataSource dataSource, boolean unresolvedOnly) {
        return ReviewRows.refusedCompensations(dataSource, unresolvedOnly);
    }

    /**
     * Marks a refused compensation resolved (after a person settled the replay), keeping it.
     *
     * @return whether an unresolved refused compensation was found and marked
     * @throws QuotaException {@link Reason#DATABASE}
     */
    public static boolean resolveCompensation(DataSource dataSource, String stream, String entryId, String resolution) {
        return ReviewRows.resolveCompensation(dataSource, stream, entryId, resolution);
    }
}
