package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.ledger.cli.LedgerCli;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reconciliation of 200,000 accounts in a JVM of 64 MB: the reconciler pages through both sides and
 * keeps only a page, the journal's tail and the first drifts in memory.
 */
class LargeReconciliationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();

    static final int ACCOUNTS = 200_000;
    static final KeyLayout LAYOUT = new KeyLayout(16);

    static String account(int i) {
        return "large-" + i;
    }

    @Test
    @DisplayName("200,000 accounts reconciled under -Xmx64m: every drift found (balance, only in the database, only in Redis), nothing else")
    void underSixtyFourMegabytes() throws Exception {
        RedisServer server = redis.server();
        try (HikariDataSource ds = Support.freshPostgres(postgres.server())) {
            String schema = Support.schemaOf(ds);
            // The database: accounts 0..199,999 at 1,000; Redis: the same, but for the drifts below.
            postgres.server().psql("SET search_path TO " + schema + "; INSERT INTO ledger_accounts (account, balance)"
                    + " SELECT 'large-' || g, 1000 FROM generate_series(0, " + (ACCOUNTS - 1) + ") g");
            RedisClient client = RedisClient.create(server.uri());
            try (StatefulRedisConnection<String, String> c = client.connect()) {
                c.setAutoFlushCommands(false);
                RedisAsyncCommands<String, String> async = c.async();
                List<RedisFuture<?>> sent = new ArrayList<>();
                for (int p = 0; p < LAYOUT.partitions(); p++) {
                    sent.add(async.set(LAYOUT.marker(p), LAYOUT.markerValue()));
                }
                for (int i = 0; i < ACCOUNTS; i++) {
                    if (i == 10 || i == 20) {
                        continue; // only in the database
                    }
                    long balance = i == 1 || i == 100_000 || i == ACCOUNTS - 1 ? 999 : 1000;
                    sent.add(async.hset(LAYOUT.accountKey(account(i)), "balance", Long.toString(balance)));
                    if (sent.size() >= 5_000) {
                        c.flushCommands();
                        for (RedisFuture<?> f : sent) {
                            f.get(10, TimeUnit.SECONDS);
                        }
                        sent.clear();
                    }
                }
                sent.add(async.hset(LAYOUT.accountKey("only-in-redis-1"), "balance", "5"));
                sent.add(async.hset(LAYOUT.accountKey("only-in-redis-2"), "balance", "6"));
                c.flushCommands();
                for (RedisFuture<?> f : sent) {
                    f.get(10, TimeUnit.SECONDS);
                }
            } finally {
                client.shutdown();
            }

            Path out = Files.createTempFile("reconcile", ".log");
            long started = System.nanoTime();
            Process p = new ProcessBuilder(ConsumerCrashTest.javaBinary(), "-Xmx64m", "-XX:+ExitOnOutOfMemoryError", "-cp",
                    ConsumerCrashTest.testClassPath(), LedgerCli.class.getName(), "reconcile", "--redis", server.uri(),
                    // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
                    "--redis-connect-timeout", "20s", "--jdbc", ds.getJdbcUrl()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            assertThat(p.waitFor(5, TimeUnit.MINUTES)).as("the reconciliation ends").isTrue();
            double seconds = (System.nanoTime() - started) / 1e9;
            String report = Files.readString(out, StandardCharsets.UTF_8);
            Files.deleteIfExists(out);
            System.out.printf("reconciled %,d accounts under -Xmx64m in %.1f s%n", ACCOUNTS + 2, seconds);
            assertThat(p.exitValue()).as("exit 1: drift found (output: %s)", report).isEqualTo(1);
            assertThat(report).contains((ACCOUNTS + 2) + " accounts checked, 7 drifted");
            for (String drifted : List.of(account(1), account(100_000), account(ACCOUNTS - 1))) {
                assertThat(report).contains(drifted + " (p" + LAYOUT.partition(drifted) + "): redis 999, database 1000");
            }
            assertThat(report).contains(account(10) + " (p" + LAYOUT.partition(account(10)) + "): redis absent, database 1000");
            assertThat(report).contains(account(20) + " (p");
            assertThat(report).contains("only-in-redis-1 (p" + LAYOUT.partition("only-in-redis-1") + "): redis 5, database absent");
            assertThat(report).contains("only-in-redis-2 (p");
        }
    }
}
