package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.ledger.store.Dialect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.time.Duration;
import java.util.OptionalLong;

/**
 * Fencing enforced at the resource: the {@code ledger_partitions} row of one partition holds the
 * fencing token of its owner. A new owner records its token ({@link #claim}); every batch first
 * updates the row {@code WHERE token <= <its token>} ({@link #check}) in its own transaction. A
 * consumer that was paused and superseded finds a higher token there and its batch is refused by the
 * database; two writers of one partition are serialised on the row's lock until commit.
 *
 * @param stream the partition's journal stream key
 * @param token  the fencing token of the lease on the partition's lock
 * @param owner  the consumer's name, for operators
 */
public record PartitionFence(String stream, long token, String owner) {

    /** A batch or a claim the database refused: a newer owner has recorded a higher token. */
    public static final class FencedOut extends Exception {
        private static final long serialVersionUID = 1L;

        final OptionalLong recorded;

        FencedOut(String stream, long token, OptionalLong recorded) {
            super("partition " + stream + " is fenced: the ledger records token "
                    + (recorded.isPresent() ? recorded.getAsLong() : "?") + ", this consumer holds " + token);
            this.recorded = recorded;
        }
    }

    private static final String ADVANCE = "UPDATE ledger_partitions SET token = ?, owner = ?,"
            + " updated_at = CURRENT_TIMESTAMP WHERE stream = ? AND token <= ?";

    /**
     * Records this owner's token for the partition (creating the row the first time), in its own
     * transaction.
     *
     * @throws FencedOut when the row holds a higher token: the lock's tokens went back (a lock backend
     *                   that lost its data) or another lock backend was used; this lease must not write
     */
    public void claim(Connection c, Dialect dialect, Duration lockTimeout) throws SQLException, FencedOut {
        c.setAutoCommit(false);
        try {
            limitLockWait(c, dialect, lockTimeout);
            if (advance(c) == 0) {
                Savepoint before = c.setSavepoint();
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO ledger_partitions (stream, token, owner)"
                        + " VALUES (?, ?, ?)")) {
                    ps.setString(1, stream);
                    ps.setLong(2, token);
                    ps.setString(3, owner);
                    ps.executeUpdate();
                    c.releaseSavepoint(before);
                } catch (SQLException e) {
                    if (e.getSQLState() == null || !e.getSQLState().startsWith("23")) {
                        throw e;
                    }
                    c.rollback(before); // another owner inserted it first: compare with its token
                    if (advance(c) == 0) {
                        throw new FencedOut(stream, token, recorded(c));
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("UPDATE ledger_partitions SET claimed_at = CURRENT_TIMESTAMP"
                    + " WHERE stream = ?")) {
                ps.setString(1, stream);
                ps.executeUpdate();
            }
            c.commit();
        } catch (SQLException | FencedOut | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * The first statement of every batch's transaction: refuses the batch when a newer owner has
     * recorded a higher token, and otherwise holds the row's lock until the batch commits.
     */
    public void check(Connection c) throws SQLException, FencedOut {
        if (advance(c) == 0) {
            throw new FencedOut(stream, token, recorded(c));
        }
    }

    /**
     * {@link #check} for several partitions in one statement (PostgreSQL: one {@code UPDATE ... FROM
     * unnest(...) RETURNING}); the streams whose fences refused (empty when none did: the rows are held).
     */
    public static java.util.Set<String> checkAll(Connection c, Dialect dialect, java.util.List<PartitionFence> fences)
            throws SQLException {
        java.util.Set<String> fenced = new java.util.TreeSet<>();
        if (dialect != Dialect.POSTGRESQL) {
            for (PartitionFence f : fences) {
                if (f.advance(c) == 0) {
                    fenced.add(f.stream());
                }
            }
            return fenced;
        }
        // Sorted by stream: every writer locks partition rows in one order.
        java.util.List<PartitionFence> sorted = fences.stream()
                .sorted(java.util.Comparator.comparing(PartitionFence::stream)).toList();
        try (PreparedStatement ps = c.prepareStatement("UPDATE ledger_partitions AS p SET token = f.token, owner = f.owner,"
                + " updated_at = CURRENT_TIMESTAMP FROM unnest(?::varchar[], ?::bigint[], ?::varchar[]) AS f(stream, token, owner)"
                + " WHERE p.stream = f.stream AND p.token <= f.token RETURNING p.stream")) {
            ps.setArray(1, c.createArrayOf("varchar", sorted.stream().map(PartitionFence::stream).toArray()));
            ps.setArray(2, c.createArrayOf("bigint", sorted.stream().map(PartitionFence::token).toArray()));
            ps.setArray(3, c.createArrayOf("varchar", sorted.stream().map(PartitionFence::owner).toArray()));
            sorted.forEach(f -> fenced.add(f.stream()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    fenced.remove(rs.getString(1));
                }
            }
            return fenced;
        }
    }

    /**
     * Bounds how long this transaction's statements wait for a row lock (PostgreSQL: {@code SET LOCAL
     * lock_timeout}; H2 has its own default of seconds), so a writer frozen inside a transaction that
     * holds the partition's row cannot stall the next owner for long; and, on PostgreSQL, how long the
     * transaction may sit idle ({@code idle_in_transaction_session_timeout}): a consumer frozen (paused,
     * stopped by a debugger, swapped out) between two statements of its batch loses its session after that
     * long, which frees the partition's row for the next owner. A consumer runs no other work inside a
     * batch's transaction, so a live one is never idle that long; one that resumes finds its session gone,
     * retries, and is fenced out.
     */
    public static void limitLockWait(Connection c, Dialect dialect, Duration timeout) throws SQLException {
        if (dialect == Dialect.POSTGRESQL) {
            long ms = Math.max(1, timeout.toMillis());
            // Both in one round trip.
            try (java.sql.Statement s = c.createStatement()) {
                s.execute("SET LOCAL lock_timeout = '" + ms + "ms'; SET LOCAL idle_in_transaction_session_timeout = '"
                        + Math.max(1_000, ms) + "ms'");
            }
        }
    }

    private int advance(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ADVANCE)) {
            ps.setLong(1, token);
            ps.setString(2, owner);
            ps.setString(3, stream);
            ps.setLong(4, token);
            return ps.executeUpdate();
        }
    }

    private OptionalLong recorded(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT token FROM ledger_partitions WHERE stream = ?")) {
            ps.setString(1, stream);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
            }
        }
    }
}
