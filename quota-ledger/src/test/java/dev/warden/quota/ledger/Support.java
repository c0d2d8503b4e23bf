package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.ledger.journal.Compensation;
import dev.warden.quota.ledger.journal.QuarantinedEntry;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;
import org.h2.jdbcx.JdbcDataSource;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Shared plumbing of the ledger tests: data sources, settings, waits with deadlines. */
final class Support {

    static final Duration DEADLINE = Duration.ofSeconds(60);

    private Support() {
    }

    /** A small pool on the test server; fails fast while the server is down. */
    static HikariDataSource postgres(PostgresServer server) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(server.jdbcUrl());
        c.setMaximumPoolSize(4);
        c.setMinimumIdle(0);
        c.setConnectionTimeout(2_000);
        c.setValidationTimeout(1_000);
        c.setInitializationFailTimeout(-1);
        return new HikariDataSource(c);
    }

    /** A fresh PostgreSQL schema per test class, so classes sharing a server do not see each other's rows. */
    static HikariDataSource freshPostgres(PostgresServer server) {
        String schema = "t" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        server.psql("CREATE SCHEMA " + schema);
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(server.jdbcUrl() + (server.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        c.setMaximumPoolSize(4);
        c.setMinimumIdle(0);
        c.setConnectionTimeout(2_000);
        c.setValidationTimeout(1_000);
        c.setInitializationFailTimeout(-1);
        HikariDataSource ds = new HikariDataSource(c);
        Ledger.migrate(ds);
        return ds;
    }

    static String schemaOf(HikariDataSource ds) {
        String url = ds.getJdbcUrl();
        return url.substring(url.indexOf("currentSchema=") + "currentSchema=".length());
    }

    static DataSource h2() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:ledger-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        return ds;
    }

    static Map<String, Object> settings(RedisServer redis) {
        return settings(redis.uri());
    }

    /** The settings for any endpoint form (a Sentinel or Cluster URI too). */
    static Map<String, Object> settings(String endpoint) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.quota.endpoint", endpoint);
        s.put("warden.quota.request-timeout", "3s");
        s.put("warden.quota.connect-timeout", "10s"); // a cold JVM on a loaded machine: class loading, not the network
        // The consumers' partition locks (Redis on the quota endpoint by default): short, so a dead
        // consumer's partitions move on quickly.
        s.put("warden.lock.ttl", "2s");
        s.put("warden.lock.connect-timeout", "30s"); // as the engine's: a cold JVM, not the network
        return s;
    }

    static LedgerConsumer.Builder consumer(RedisServer redis, DataSource ds, String name) {
        return consumer(redis.uri(), ds, name);
    }

    static LedgerConsumer.Builder consumer(String endpoint, DataSource ds, String name) {
        return LedgerConsumer.builder(settings(endpoint), ds).consumerName(name).batchSize(50)
                .blockTime(Duration.ofMillis(200)).sweepInterval(Duration.ofMillis(300))
                .rebalanceInterval(Duration.ofMillis(300))
                .retryBackoff(Duration.ofMillis(20), Duration.ofMillis(500)).lagInterval(Duration.ofMillis(500));
    }

    static QuotaService quota(RedisServer redis) {
        return QuotaService.create(settings(redis));
    }

    static void await(String what, BooleanSupplier condition) {
        await(DEADLINE, what, condition);
    }

    static void await(Duration deadline, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                if (System.nanoTime() - end > 0) {
                    throw new AssertionError("within " + deadline + ": " + what + " (last failure: " + e + ")", e);
                }
            }
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("within " + deadline + ": " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }

    /**
     * Entries not yet in the database, read from the server (pending or not yet delivered to the
     * default group), for consumers that run in other processes.
     */
    static long backlog(RedisServer redis, dev.warden.quota.redis.KeyLayout layout) {
        long total = 0;
        for (int p = 0; p < layout.partitions(); p++) {
            String stream = layout.journal(p);
            if (!"1".equals(String.valueOf(redis.command("EXISTS", stream)))) {
                continue;
            }
            List<?> groups = (List<?>) redis.command("XINFO", "GROUPS", stream);
            boolean found = false;
            for (Object g : groups) {
                List<?> info = (List<?>) g;
                Map<String, Object> f = new HashMap<>();
                for (int i = 0; i + 1 < info.size(); i += 2) {
                    f.put(String.valueOf(info.get(i)), info.get(i + 1));
                }
                if (LedgerConsumer.DEFAULT_GROUP.equals(f.get("name"))) {
                    found = true;
                    total += Long.parseLong(String.valueOf(f.get("pending"))) + Long.parseLong(String.valueOf(f.get("lag")));
                }
            }
            if (!found) {
                total += Long.parseLong(String.valueOf(redis.command("XLEN", stream)));
            }
        }
        return total;
    }

    /** Waits until the consumer's backlog is zero (everything journaled is in the database). */
    static void drained(LedgerConsumer consumer) {
        await("the journal is drained into the database", () -> consumer.backlog() == 0);
    }

    /** A listener that records what it is told. */
    static final class Recorder implements LedgerListener {
        final List<Batch> batches = new CopyOnWriteArrayList<>();
        final List<QuarantinedEntry> quarantined = new CopyOnWriteArrayList<>();
        final List<Compensation> compensations = new CopyOnWriteArrayList<>();
        final List<Throwable> databaseFailures = new CopyOnWriteArrayList<>();
        final List<Throwable> redisFailures = new CopyOnWriteArrayList<>();
        final List<long[]> lags = new CopyOnWriteArrayList<>();

        @Override
        public void batchCommitted(Batch batch) {
            batches.add(batch);
        }

        @Override
        public void quarantined(QuarantinedEntry entry) {
            quarantined.add(entry);
        }

        @Override
        public void compensated(Compensation compensation) {
            compensations.add(compensation);
        }

        @Override
        public void lag(int partition, long pending, long undelivered) {
            lags.add(new long[]{partition, pending, undelivered});
        }

        @Override
        public void databaseUnavailable(Throwable cause, Duration retryIn) {
            databaseFailures.add(cause);
        }

        @Override
        public void redisUnavailable(Throwable cause, Duration retryIn) {
            redisFailures.add(cause);
        }
    }
}
