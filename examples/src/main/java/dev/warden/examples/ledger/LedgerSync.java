package dev.warden.examples.ledger;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.examples.Config;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.Reconciler;

import javax.sql.DataSource;
import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The ledger beside the quota engine: a journal consumer moves every change from the engine's Redis
 * streams into the ledger database, where constraints guard it, and a reconciliation compares Redis
 * with the database. A service runs the consumer for its whole life and reconciles on a schedule
 * ({@code Reconciler.schedule}); this program drains what the journal holds, reconciles once, and exits.
 *
 * <p>Settings ({@code examples/config/quota/billing.properties}): the engine's {@code warden.quota.*}; the
 * database as {@code ledger.jdbc-url} and {@code ledger.jdbc-user} (or {@code -Dledger.jdbc-url=...}),
 * its password from the environment variable {@code WARDEN_JDBC_PASSWORD}, never from a file or a
 * command line.
 *
 * <pre>
 * java dev.warden.examples.ledger.LedgerSync examples/config/quota/billing.properties
 * </pre>
 * Exit code: 0 drained and clean, 1 a backlog or a drift is left, 3 Redis or the database failed.
 */
public final class LedgerSync {

    /** One account whose Redis balance is not what the ledger says it should be. */
    public record Drift(String account, OptionalLong redis, OptionalLong expected) {
    }

    /** What a reconciliation found, in the terms a person reads it. */
    public record Reconciliation(long accountsChecked, List<Drift> drifted, long driftedTotal, long unpersistedEntries,
                                 long unresolvedQuarantine, boolean clean) {
    }

    private LedgerSync() {
    }

    public static void main(String[] args) throws InterruptedException {
        System.exit(run(args, System.out));
    }

    /** {@code <settings file>}; returns the exit code. */
    public static int run(String[] args, PrintStream out) throws InterruptedException {
        Map<String, Object> settings = Config.load(args.length > 0 ? args[0] : null);
        try (HikariDataSource ds = dataSource(Config.get(settings, "ledger.jdbc-url", null),
                Config.get(settings, "ledger.jdbc-user", null))) {
            out.println("ledger schema at version " + Ledger.migrate(ds)); // creates or upgrades the tables

            long backlog;
            try (LedgerConsumer consumer = LedgerConsumer.builder(settings, ds).consumerName("ledger-sync").start()) {
                backlog = drain(consumer, Duration.ofSeconds(60));
                LedgerConsumer.Stats stats = consumer.stats();
                out.printf("journal drained: %d entries applied in %d batches, %d quarantined; backlog %d%n",
                        stats.applied(), stats.batches(), stats.quarantined(), backlog);
            }
            Reconciliation r = reconcile(settings, ds);
            out.printf("reconciliation: %d accounts checked, %d drifted, %d entries not yet in the ledger,"
                    + " %d unresolved quarantined: %s%n", r.accountsChecked(), r.driftedTotal(), r.unpersistedEntries(),
                    r.unresolvedQuarantine(), r.clean() ? "clean" : "NOT clean");
            r.drifted().forEach(d -> out.printf("  drift %s: Redis %s, the ledger expects %s%n", d.account(),
                    shown(d.redis()), shown(d.expected())));
            return backlog == 0 && r.clean() ? 0 : 1;
        } catch (QuotaException e) {
            out.println("ledger-sync: " + e.getMessage() + " (" + e.reason() + ")");
            return 3;
        }
    }

    private static String shown(OptionalLong balance) {
        return balance.isPresent() ? Long.toString(balance.getAsLong()) : "no account";
    }

    /** A small pool on the ledger database; the password from {@code WARDEN_JDBC_PASSWORD}. */
    public static HikariDataSource dataSource(String jdbcUrl, String user) {
        if (jdbcUrl == null) {
            throw new IllegalArgumentException("set ledger.jdbc-url, e.g. jdbc:postgresql://127.0.0.1:5432/warden");
        }
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl);
        c.setUsername(user);
        c.setPassword(System.getenv("WARDEN_JDBC_PASSWORD"));
        c.setMaximumPoolSize(4);
        c.setPoolName("ledger");
        return new HikariDataSource(c);
    }

    /** Waits until the journal is in the database, or {@code timeout} passed; returns the backlog left. */
    public static long drain(LedgerConsumer consumer, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long backlog = consumer.backlog();
        while (backlog > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
            backlog = consumer.backlog();
        }
        return backlog;
    }

    /** Compares Redis with the ledger: every account, plus the journal entries still on their way. */
    public static Reconciliation reconcile(Map<String, ?> settings, DataSource ds) {
        try (Reconciler reconciler = Reconciler.create(settings, ds)) {
            var report = reconciler.check();
            List<Drift> drifted = report.drifted().stream()
                    .map(d -> new Drift(d.account(), d.redisBalance(), d.expected())).toList();
            return new Reconciliation(report.accountsChecked(), drifted, report.driftedTotal(),
                    report.unpersistedEntries(), report.unresolvedQuarantine(), report.clean());
        }
    }
}
