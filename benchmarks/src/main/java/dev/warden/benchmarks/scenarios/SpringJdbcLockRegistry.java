package dev.warden.benchmarks.scenarios;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.benchmarks.Workload;
import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Lock;

/**
 * Baseline: Spring Integration's {@code JdbcLockRegistry} over a {@code DefaultLockRepository} on the same
 * PostgreSQL, wired as a Spring application would ({@code new DefaultLockRepository(dataSource)} with a
 * {@code DataSourceTransactionManager}, then {@code new JdbcLockRegistry(repository)}), all defaults: locks
 * live 10 s, {@code lock()} retries every 100 ms. The {@code INT_LOCK} table is created from the DDL the jar
 * ships ({@code org/springframework/integration/jdbc/schema-postgresql.sql}).
 *
 * <p>What one {@code lock()} does: first a JVM-local {@code ReentrantLock} per key (so a registry's own
 * threads queue in memory and only one of them talks to the database), then, until it succeeds, one
 * transaction ({@code UPDATE ... WHERE CLIENT_ID = ? OR EXPIRED_AFTER < now}, else {@code INSERT}) and a
 * 100 ms sleep; {@code unlock()} is one more transaction ({@code DELETE}). The row's note counts the
 * transactions (connections the repository borrowed) per acquisition.
 */
public final class SpringJdbcLockRegistry implements Workload {

    private static final String SCHEMA = "org/springframework/integration/jdbc/schema-postgresql.sql";

    private final CriticalSection shared = new CriticalSection();
    private final PostgresCpu postgresCpu = new PostgresCpu();
    private final LongAdder transactions = new LongAdder();
    private final PerThread perThread = new PerThread();

    private final String jdbcUrl;
    private final LockContention contention;
    private HikariDataSource[] pools;
    private DefaultLockRepository[] repositories;
    private Lock[] locks;
    private long transactionsAtStart;
    private long acquisitions;
    private String cpuNote = "";

    public SpringJdbcLockRegistry(String jdbcUrl, LockContention contention) {
        this.jdbcUrl = jdbcUrl;
        this.contention = contention;
    }

    @Override
    public String scenario() {
        return contention.scenario();
    }

    @Override
    public String implementation() {
        return "spring jdbc JdbcLockRegistry (lock(), polls every 100 ms)";
    }

    @Override
    public void setUp(int threads) throws Exception {
        int clients = contention.clientPerThread() ? threads : 1;
        pools = new HikariDataSource[clients];
        repositories = new DefaultLockRepository[clients];
        JdbcLockRegistry[] registries = new JdbcLockRegistry[clients];
        for (int i = 0; i < clients; i++) {
            pools[i] = JdbcPool.open(jdbcUrl, "spring-" + i);
            if (i == 0) {
                createTable(pools[0]);
            }
            DelegatingDataSource counted = new DelegatingDataSource(pools[i]) {
                @Override
                public Connection getConnection() throws SQLException {
                    transactions.increment();
                    return super.getConnection();
                }
            };
            DefaultLockRepository repository = new DefaultLockRepository(counted);
            repository.setTransactionManager(new DataSourceTransactionManager(counted));
            repository.afterPropertiesSet();
            repository.afterSingletonsInstantiated();
            repository.start();
            repositories[i] = repository;
            registries[i] = new JdbcLockRegistry(repository);
        }
        locks = new Lock[threads];
        for (int i = 0; i < threads; i++) {
            locks[i] = registries[contention.clientPerThread() ? i : 0].obtain(contention.contended() ? "bench-hot" : "bench-" + i);
        }
        transactionsAtStart = transactions.sum();
        perThread.setUp(threads);
        postgresCpu.start();
    }

    /** {@code INT_LOCK} from the jar's PostgreSQL script, unless it is there; emptied either way. */
    private static void createTable(HikariDataSource pool) throws SQLException, IOException {
        String ddl;
        try (InputStream in = JdbcLockRegistry.class.getClassLoader().getResourceAsStream(SCHEMA)) {
            if (in == null) {
                throw new IllegalStateException(SCHEMA + " is not on the class path");
            }
            ddl = Arrays.stream(new String(in.readAllBytes(), StandardCharsets.UTF_8).split(";"))
                    .map(String::strip)
                    .filter(sql -> sql.toUpperCase(Locale.ROOT).startsWith("CREATE TABLE INT_LOCK "))
                    .findFirst()
                    .orElseThrow(() -> new IllegalStateException(SCHEMA + " has no CREATE TABLE INT_LOCK"));
        }
        try (Connection c = pool.getConnection(); Statement s = c.createStatement()) {
            boolean exists;
            try (ResultSet r = s.executeQuery("SELECT to_regclass('int_lock') IS NOT NULL")) {
                exists = r.next() && r.getBoolean(1);
            }
            if (!exists) {
                s.execute(ddl);
            }
            s.execute("DELETE FROM INT_LOCK");
        }
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contention.contended() ? shared : new CriticalSection();
        Lock lock = locks[index];
        return () -> {
            lock.lock();
            try {
                section.run();
            } finally {
                lock.unlock();
            }
            perThread.acquired(index);
        };
    }

    @Override
    public void verify(long completed) {
        acquisitions = completed;
        cpuNote = postgresCpu.perOperation(completed);
    }

    @Override
    public String note() {
        String calls = acquisitions == 0 ? "" : String.format(Locale.ROOT, "%.2f transactions per acquisition",
                (transactions.sum() - transactionsAtStart) / (double) acquisitions);
        return PerThread.join(calls, contention.contended() ? perThread.note() : "", cpuNote);
    }

    @Override
    public void close() {
        if (repositories != null) {
            for (DefaultLockRepository repository : repositories) {
                if (repository != null) {
                    repository.close();
                }
            }
        }
        if (pools != null) {
            for (HikariDataSource pool : pools) {
                if (pool != null) {
                    pool.close();
                }
            }
        }
    }
}
