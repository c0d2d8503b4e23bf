package dev.warden.quota.ledger.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Binds a batch's columns as SQL arrays, one parameter each in order: the PostgreSQL statements that
 * take a whole batch as {@code unnest(?::varchar[], ?::bigint[], ...)}, planned once whatever its size.
 */
final class SqlArrays {

    private SqlArrays() {
    }

    /**
     * Sets parameters 1..n to the columns, each as an array of its SQL element type.
     *
     * @param types   the element type of each column ({@code "varchar"}, {@code "bigint"}), as many as columns
     * @param columns the columns' values, one array per column
     */
    static void bind(Connection c, PreparedStatement ps, String[] types, Object[]... columns) throws SQLException {
        if (types.length != columns.length) {
            throw new IllegalArgumentException(types.length + " types for " + columns.length + " columns");
        }
        for (int i = 0; i < columns.length; i++) {
            ps.setArray(i + 1, c.createArrayOf(types[i], columns[i]));
        }
    }
}
