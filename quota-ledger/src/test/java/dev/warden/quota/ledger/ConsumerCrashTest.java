package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Deduction;
import dev.warden.quota.QuotaService;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** A consumer that dies mid-batch: nothing lost, nothing doubled once another consumer claims its entries. */
class ConsumerCrashTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static final KeyLayout LAYOUT = new KeyLayout(16);
    static HikariDataSource ds;
    static String schema;

    @BeforeAll
    static void schema() {
        ds = Support.freshPostgres(postgres.server());
        schema = Support.schemaOf(ds);
    }

    @AfterAll
    static void close() {
        ds.close();
    }

    static String sql(String query) {
        return postgres.server().psql("SET search_path TO " + schema + "; " + query);
    }

    static RedisServer server() {
        return redis.server();
    }

    /** Dies the way a crashed thread does: not an exception the consumer catches. */
    static final class Crash extends Error {
        private static final long serialVersionUID = 1L;

        Crash() {
            super("simulated crash right after a commit, before XACK");
        }
    }

    /** Commits for real, then crashes, on the {@code n}-th commit of a batch (a transaction that wrote entries). */
    static DataSource crashingAfterCommit(DataSource real, int n) {
        AtomicInteger commits = new AtomicInteger();
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    Object result = invoke(real, method, args);
                    if (method.getName().equals("getConnection")) {
                        Connection c = (Connection) result;
                        boolean[] wroteEntries = {false};
                        InvocationHandler h = (p, m, a) -> {
                            // Entries go in with COPY through the driver's own connection on PostgreSQL (an insert on H2).
                            if (m.getName().equals("prepareStatement") && String.valueOf(a[0]).startsWith("INSERT INTO ledger_entries")
                                    || m.getName().equals("unwrap") && a[0] == org.postgresql.PGConnection.class) {
                                wroteEntries[0] = true;
                            }
                            Object r = invoke(c, m, a);
                            if (m.getName().equals("commit") && wroteEntries[0] && commits.incrementAndGet() == n) {
                                throw new Crash();
                            }
                            if (m.getName().equals("commit") || m.getName().equals("rollback")) {
                                wroteEntries[0] = false;
                            }
                            return r;
                        };
                        return Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class}, h);
                    }
                    return result;
                });
    }

    static Object invoke(Object target, java.lang.reflect.Method m, Object[] args) throws Throwable {
        try {
            return m.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    static List<String> openAccounts(QuotaService quota, int n, long initial) {
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String a = "m-" + UUID.randomUUID();
            quota.open(a, initial);
            accounts.add(a);
        }
        return accounts;
    }

    /** {@code rounds} deductions of 1 per account, pipelined; returns how many were applied. */
    static long deductRounds(QuotaService quota, List<String> accounts, int rounds, String tag) {
        long applied = 0;
        for (int r = 0; r < rounds; r++) {
            List<Deduction> batch = new ArrayList<>();
            for (String a : accounts) {
                batch.add(new Deduction(a, 1, tag + "-" + r + "-" + a));
            }
            applied += quota.deductAll(batch).stream().filter(o -> o.isApplied()).count();
        }
        return applied;
    }

    static void assertLedgerMatches(QuotaService quota, List<String> accounts, long initial, long perAccount) {
        for (String a : accounts) {
            assertThat(quota.balance(a)).hasValue(initial - perAccount);
            assertThat(sql("SELECT balance FROM ledger_accounts WHERE account = '" + a + "'"))
                    .isEqualTo(Long.toString(initial - perAccount));
            assertThat(sql("SELECT COUNT(*) FROM ledger_entries WHERE account = '" + a + "' AND kind = 'deduct'"))
                    .isEqualTo(Long.toString(perAccount));
        }
    }

    @Test
    @DisplayName("the consumer thread dies after a commit, before XACK: its entries stay pending, another consumer claims them, and they are no-ops")
    void diesBetweenCommitAndAck() {
        try (QuotaService quota = Support.quota(server())) {
            List<String> accounts = openAccounts(quota, 10, 10_000);
            deductRounds(quota, accounts, 30, "crash");
            String victimName = "victim-" + UUID.randomUUID();
            // The first commit that writes entries crashes the thread: a round of several partitions, written
            // together, or a partition's own batch.
            LedgerConsumer victim = Support.consumer(server(), crashingAfterCommit(ds, 1), victimName).start();
            try {
                Support.await("the victim died", () -> !victim.isRunning());
                long pendingOnVictim = pendingOn(victimName);
                assertThat(pendingOnVictim).as("entries committed but never acknowledged").isPositive();
                assertThat(victim.stats().batches()).as("nothing was acknowledged").isZero();

                try (LedgerConsumer heir = Support.consumer(server(), ds, "heir-" + UUID.randomUUID()).start()) {
                    Support.drained(heir);
                    assertThat(heir.stats().claimed()).isGreaterThanOrEqualTo(pendingOnVictim);
                    // The batch whose commit went through comes back as no-ops; the rest of what the victim had
                    // read (other partitions, not yet written) is applied by the heir.
                    assertThat(heir.stats().redelivered()).isPositive();
                }
                assertThat(pendingOn(victimName)).isZero();
                assertLedgerMatches(quota, accounts, 10_000, 30);
            } finally {
                victim.close();
            }
        }
    }

    @Test
    @DisplayName("a consumer process killed with SIGKILL under load: after another consumer takes over, nothing is lost and nothing doubled")
    void processKilled() throws Exception {
        try (QuotaService quota = Support.quota(server())) {
            List<String> accounts = openAccounts(quota, 20, 1_000_000);
            deductRounds(quota, accounts, 100, "before");
            String childName = "child-" + UUID.randomUUID();
            // A consumer in its own JVM, killed with SIGKILL mid-run (the CLI's consume is the same
            // LedgerConsumer; quota-ledger-cli's tests run the command itself).
            ChildConsumer child = ChildConsumer.start(childName, server().uri(), ds.getJdbcUrl());
            try {
                Support.await(Duration.ofSeconds(90), "the child consumer is writing (log: " + child.log + ")",
                        () -> Long.parseLong(sql("SELECT COUNT(*) FROM ledger_entries WHERE kind = 'deduct' AND request_id LIKE 'before-%'")) >= 200);
            } finally {
                child.kill();
                child.close();
            }
            long inDatabase = Long.parseLong(sql("SELECT COUNT(*) FROM ledger_entries WHERE request_id LIKE 'before-%'"));
            System.out.printf("child killed with %d of %d deductions in the database, %d pending on it%n", inDatabase,
                    20 * 100, pendingOn(childName));
            deductRounds(quota, accounts, 20, "after");
            try (LedgerConsumer heir = Support.consumer(server(), ds, "heir-" + UUID.randomUUID()).start()) {
                Support.drained(heir);
            }
            assertThat(pendingOn(childName)).isZero();
            assertLedgerMatches(quota, accounts, 1_000_000, 120);
        }
    }

    static long pendingOn(String consumer) {
        long total = 0;
        for (int p = 0; p < 16; p++) {
            if (!"1".equals(String.valueOf(server().command("EXISTS", LAYOUT.journal(p))))) {
                continue;
            }
            List<?> groups = (List<?>) server().command("XINFO", "GROUPS", LAYOUT.journal(p));
            if (groups.isEmpty()) {
                continue; // no consumer ever owned this partition
            }
            List<?> reply = (List<?>) server().command("XPENDING", LAYOUT.journal(p), LedgerConsumer.DEFAULT_GROUP);
            List<?> perConsumer = (List<?>) reply.get(3);
            if (perConsumer == null) {
                continue;
            }
            for (Object o : perConsumer) {
                List<?> pair = (List<?>) o;
                if (consumer.equals(pair.get(0))) {
                    total += Long.parseLong((String) pair.get(1));
                }
            }
        }
        return total;
    }

    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static String testClassPath() {
        String cp = System.getProperty("surefire.test.class.path");
        return cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path");
    }
}
