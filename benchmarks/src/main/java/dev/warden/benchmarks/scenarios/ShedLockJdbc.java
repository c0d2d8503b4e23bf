package dev.warden.benchmarks.scenarios;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.benchmarks.Workload;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.LongAdder;

/**
 * Baseline: ShedLock's plain-JDBC {@code JdbcLockProvider} on the same PostgreSQL, in its documented
 * {@code shedlock} table. ShedLock is a try-lock: {@code lock()} either takes the lock at once or returns
 * empty, and ShedLock itself never waits (a scheduled task that finds the lock taken is skipped). To run the
 * same critical-section loop as the other rows, a refused thread sleeps {@link #RETRY_AFTER} and tries again
 * until it gets the lock: that loop is this benchmark's, not ShedLock's, and the refused tries are counted in
 * the row's note. Each try is one {@code UPDATE ... WHERE name = ? AND lock_until <= now} (the first try of a
 * name an {@code INSERT}); the release one {@code UPDATE} setting {@code lock_until} to now. Times are the
 * JVM's clock, written into the row; the lock is held at most 30 s (Warden's default TTL), at least 0.
 */
public final class ShedLockJdbc implements Workload {

    /** How long a refused thread waits before it tries again. */
    static final Duration RETRY_AFTER = Duration.ofMillis(1);

    /** {@code lockAtMostFor}: the longest a holder that never releases keeps the lock. */
    private static final Duration AT_MOST = Duration.ofSeconds(30);

    /** The table from ShedLock's README for PostgreSQL (made idempotent). */
    private static final String TABLE = "CREATE TABLE IF NOT EXISTS shedlock(name VARCHAR(64) NOT NULL,"
            + " lock_until TIMESTAMP NOT NULL, locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL,"
            + " PRIMARY KEY (name))";

    private final CriticalSection shared = new CriticalSection();
    private final PostgresCpu postgresCpu = new PostgresCpu();
    private final LongAdder refused = new LongAdder();
    private final PerThread perThread = new PerThread();

    private final String jdbcUrl;
    private final LockContention contention;
    private HikariDataSource[] pools;
    private JdbcLockProvider[] providers;
    private String cpuNote = "";
    private long acquisitions;

    public ShedLockJdbc(String jdbcUrl, LockContention contention) {
        this.jdbcUrl = jdbcUrl;
        this.contention = contention;
    }

    @Override
    public String scenario() {
        return contention.scenario();
    }

    @Override
    public String implementation() {
        return "shedlock jdbc JdbcLockProvider (try-lock; refused: retry after " + RETRY_AFTER.toMillis() + " ms)";
    }

    @Override
    public void setUp(int threads) throws Exception {
        int clients = contention.clientPerThread() ? threads : 1;
        pools = new HikariDataSource[clients];
        providers = new JdbcLockProvider[clients];
        for (int i = 0; i < clients; i++) {
            pools[i] = JdbcPool.open(jdbcUrl, "shedlock-" + i);
            providers[i] = new JdbcLockProvider(pools[i]);
        }
        try (Connection c = pools[0].getConnection(); Statement s = c.createStatement()) {
            s.execute(TABLE);
            s.execute("DELETE FROM shedlock");
        }
        perThread.setUp(threads);
        postgresCpu.start();
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contention.contended() ? shared : new CriticalSection();
        JdbcLockProvider provider = providers[contention.clientPerThread() ? index : 0];
        String name = contention.contended() ? "bench-hot" : "bench-" + index;
        long retryMillis = RETRY_AFTER.toMillis();
        return () -> {
            Optional<SimpleLock> lock;
            while ((lock = provider.lock(new LockConfiguration(ClockProvider.now(), name, AT_MOST, Duration.ZERO))).isEmpty()) {
                refused.increment();
                Thread.sleep(retryMillis);
            }
            try {
                section.run();
            } finally {
                lock.get().unlock();
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
        String tries = acquisitions == 0 ? "" : String.format(Locale.ROOT, "%.2f refused tries per acquisition",
                refused.sum() / (double) acquisitions);
        return PerThread.join(tries, contention.contended() ? perThread.note() : "", cpuNote);
    }

    @Override
    public void close() {
        if (pools != null) {
            for (HikariDataSource pool : pools) {
                if (pool != null) {
                    pool.close();
                }
            }
        }
    }
}
