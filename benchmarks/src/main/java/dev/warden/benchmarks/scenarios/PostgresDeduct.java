package dev.warden.benchmarks.scenarios;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.benchmarks.Workload;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Baselines in PostgreSQL: the seed's starting point ({@code SELECT ... FOR UPDATE}, then
 * {@code UPDATE}, in one transaction) and the conditional {@code UPDATE ... WHERE remaining >= ?}
 * in autocommit. A connection per thread, as a pool sized to the load would give.
 */
public final class PostgresDeduct implements Workload {

    /** Which SQL does the deduction. */
    public enum Style { SELECT_FOR_UPDATE, CONDITIONAL_UPDATE }

    private final String jdbcUrl;
    private final Accounts accounts;
    private final Style style;
    private HikariDataSource pool;
    private long baseline;

    public PostgresDeduct(String jdbcUrl, Accounts accounts, Style style) {
        this.jdbcUrl = jdbcUrl;
        this.accounts = accounts;
        this.style = style;
    }

    @Override
    public String scenario() {
        return "quota deduct, " + accounts.label();
    }

    @Override
    public String implementation() {
        return style == Style.SELECT_FOR_UPDATE ? "postgres select-for-update" : "postgres conditional update";
    }

    @Override
    public void setUp(int threads) throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(threads + 1);
        config.setMinimumIdle(threads + 1);
        pool = new HikariDataSource(config);
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS bench_accounts (account text PRIMARY KEY, "
                    + "remaining bigint NOT NULL CHECK (remaining >= 0))");
            s.execute("TRUNCATE bench_accounts");
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO bench_accounts VALUES (?, ?)")) {
                for (int i = 0; i < accounts.count(); i++) {
                    insert.setString(1, accounts.account(i));
                    insert.setLong(2, Accounts.INITIAL);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
        }
        baseline = total();
    }

    @Override
    public Operation operation(int index) {
        return style == Style.SELECT_FOR_UPDATE ? this::selectForUpdate : this::conditionalUpdate;
    }

    private void selectForUpdate() throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement select = c.prepareStatement("SELECT remaining FROM bench_accounts WHERE account = ? FOR UPDATE");
                 PreparedStatement update = c.prepareStatement("UPDATE bench_accounts SET remaining = ? WHERE account = ?")) {
                String account = next();
                select.setString(1, account);
                long remaining;
                try (ResultSet rs = select.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("no account " + account);
                    }
                    remaining = rs.getLong(1);
                }
                if (remaining < 1) {
                    throw new IllegalStateException("insufficient");
                }
                update.setLong(1, remaining - 1);
                update.setString(2, account);
                update.executeUpdate();
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
    }

    private void conditionalUpdate() throws SQLException {
        try (Connection c = pool.getConnection();
             PreparedStatement update = c.prepareStatement(
                     "UPDATE bench_accounts SET remaining = remaining - ? WHERE account = ? AND remaining >= ?")) {
            update.setLong(1, 1);
            update.setString(2, next());
            update.setLong(3, 1);
            if (update.executeUpdate() != 1) {
                throw new IllegalStateException("insufficient");
            }
        }
    }

    private String next() {
        return accounts.account(ThreadLocalRandom.current().nextInt(accounts.count()));
    }

    @Override
    public void verify(long completed) throws SQLException {
        long dropped = baseline - total();
        if (dropped != completed) {
            throw new IllegalStateException(implementation() + ": balances fell by " + dropped + " but " + completed
                    + " deductions were acknowledged");
        }
    }

    private long total() throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT coalesce(sum(remaining), 0) FROM bench_accounts")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    public void close() {
        if (pool != null) {
            pool.close();
        }
    }
}
