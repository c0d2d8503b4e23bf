package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.ledger.internal.consume.BatchStep.Action;
import dev.warden.quota.ledger.internal.store.AccountRows;
import dev.warden.quota.ledger.internal.store.EntryRows;
import dev.warden.quota.ledger.internal.store.LedgerSql;
import dev.warden.quota.ledger.internal.store.PartitionFence;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.KeyLayout;

import java.sql.BatchUpdateException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Writes one batch of one partition's journal in one transaction, fenced: the partition's
 * {@code ledger_partitions} row is updated {@code WHERE token <= <the owner's token>} first, so a
 * superseded owner's batch is refused by the database ({@link PartitionFence.FencedOut}).
 *
 * <p>Each attempt classifies the batch ({@link BatchClassifier}) and writes it on the fast path
 * ({@code NetWrite}: the entries in one {@code COPY}, one net update per account); the attempts go from
 * the cheapest to the surest, each rolled back when the database refuses it:
 * <ol>
 *   <li>entries fresh from the stream (never delivered before) are classified without asking which
 *       keys the ledger holds: it holds none of them but after a replay or a crash, and then the
 *       table's key refuses the insert (SQLSTATE 23505);</li>
 *   <li>classified with the key lookup (a redelivery is a no-op, a replay is compensated);</li>
 *   <li>entry by entry, each under a savepoint ({@code EntryByEntryWrite}), so the refused entries go to
 *       quarantine and the rest are applied.</li>
 * </ol>
 * Errors that are not refusals (the database is down) are thrown, and the caller retries the whole batch.
 * Nothing is acknowledged in Redis before the commit: that is the caller's, after this returns.
 */
public final class BatchWriter {

    /** A journal message as read from the stream. */
    public record Raw(String id, Map<String, String> fields) {
    }

    /**
     * One partition's batch: its entries and the fence its owner writes them under.
     *
     * @param fresh whether the entries were read new from the stream (never delivered before), so the
     *              ledger almost certainly holds none of them; false for entries claimed from a pending list
     */
    public record Part(int partition, String stream, PartitionFence fence, List<Raw> raws, boolean fresh) {

        /** Entries that may have been delivered before: always classified with the key lookup. */
        public Part(int partition, String stream, PartitionFence fence, List<Raw> raws) {
            this(partition, stream, fence, raws, false);
        }
    }

    private final Dialect dialect;
    private final BatchClassifier classifier;
    private final NetWrite netWrite;
    private final EntryByEntryWrite entryByEntry;

    /** @param layout where each account's own partition is (a split account's bucket entries arrive in others) */
    public BatchWriter(Dialect dialect, KeyLayout layout) {
        this.dialect = dialect;
        LedgerSql sql = new LedgerSql(dialect);
        AccountRows rows = new AccountRows(dialect);
        EntryRows entryRows = new EntryRows(dialect);
        this.classifier = new BatchClassifier(sql);
        this.netWrite = new NetWrite(layout, sql, rows, entryRows);
        this.entryByEntry = new EntryByEntryWrite(layout, sql, rows, entryRows);
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
            boolean lookUpKeys = !part.fresh();
            while (true) {
                begin(c, part, lockTimeout);
                List<BatchStep> steps = classifier.classify(c, List.of(part), lookUpKeys);
                NetWrite.Result result = netWrite.write(c, steps);
                if (result == NetWrite.Result.WRITTEN) {
                    c.commit();
                    return steps;
                }
                c.rollback();
                if (result == NetWrite.Result.REFUSED || lookUpKeys) {
                    break;
                }
                lookUpKeys = true; // the ledger holds one of the keys: a redelivery or a replay
            }
            begin(c, part, lockTimeout);
            List<BatchStep> steps = classifier.classify(c, List.of(part), true);
            entryByEntry.write(c, steps);
            c.commit();
            return steps;
        } catch (SQLException | PartitionFence.FencedOut | RuntimeException e) {
            rollback(c, e);
            throw e;
        }
    }

    private void begin(Connection c, Part part, Duration lockTimeout) throws SQLException, PartitionFence.FencedOut {
        PartitionFence.limitLockWait(c, dialect, lockTimeout);
        part.fence().check(c);
    }

    /**
     * What {@link #writeTogether} did: the steps once committed; or nothing written, because these
     * partitions are fenced (a newer owner recorded a higher token), or because the database refused
     * something (both empty: write the parts one by one with {@link #write}, which finds the entry).
     */
    public record Together(Optional<List<BatchStep>> steps, Set<String> fenced) {
    }

    /**
     * Writes several partitions' batches in one transaction, on the fast path only: the fences, the
     * lookups, one {@code COPY}, one balance update and one commit for all of them, so a consumer that owns
     * many partitions pays the round trips and the commit once per round rather than once per partition.
     */
    Together writeTogether(Connection c, List<Part> parts, Duration lockTimeout) throws SQLException {
        c.setAutoCommit(false);
        try {
            PartitionFence.limitLockWait(c, dialect, lockTimeout);
            Set<String> fenced = PartitionFence.checkAll(c, dialect, parts.stream().map(Part::fence).toList());
            if (!fenced.isEmpty()) {
                c.rollback();
                return new Together(Optional.empty(), fenced);
            }
            List<BatchStep> steps = classifier.classify(c, parts, !parts.stream().allMatch(Part::fresh));
            if (steps.stream().anyMatch(st -> st.action == Action.QUARANTINE)
                    || netWrite.write(c, steps) != NetWrite.Result.WRITTEN) {
                c.rollback();
                return new Together(Optional.empty(), Set.of());
            }
            c.commit();
            return new Together(Optional.of(steps), Set.of());
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
        return anyState(e, "23") || anyState(e, "22");
    }

    /** Whether the refusal is a unique key's (SQLSTATE 23505): the table already holds the key or position. */
    static boolean keyHeld(SQLException e) {
        return anyState(e, "23505");
    }

    private static boolean anyState(SQLException e, String prefix) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SQLException s && s.getSQLState() != null && s.getSQLState().startsWith(prefix)) {
                return true;
            }
            if (t instanceof BatchUpdateException b && b.getNextException() != null && b.getNextException() != t
                    && anyState(b.getNextException(), prefix)) {
                return true;
            }
        }
        return false;
    }
}
