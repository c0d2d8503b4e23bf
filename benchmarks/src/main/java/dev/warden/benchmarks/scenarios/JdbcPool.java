package dev.warden.benchmarks.scenarios;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * The connection pool the PostgreSQL lock baselines get: HikariCP shaped like the pool Warden's jdbc backend
 * opens by default (at most 8 connections, 2 kept idle, autocommit), so the database sees the same number of
 * connections from each library.
 */
final class JdbcPool {

    /** Warden's {@code warden.lock.jdbc.pool-size} default. */
    static final int SIZE = 8;

    private JdbcPool() {
    }

    static HikariDataSource open(String jdbcUrl, String name) {
        HikariConfig config = new HikariConfig();
        config.setPoolName(name);
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(SIZE);
        config.setMinimumIdle(2);
        config.setAutoCommit(true);
        return new HikariDataSource(config);
    }
}
