package dev.warden.quota.ledger.child;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.consume.LedgerListener;

import javax.sql.DataSource;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A ledger consumer in its own JVM, so a test can kill it (SIGKILL) or freeze it (SIGSTOP) the way a
 * real process dies or stalls. Arguments: Redis URI, JDBC URL, consumer name, a control directory.
 * Prints one line per event ({@code STARTED}, {@code TOOK <p> <token>}, {@code LOST <p>},
 * {@code FENCED <p> <token>}, {@code BATCH <p> <entries>}).
 *
 * <p>When the file {@code freeze} appears in the control directory, the next connection the consumer
 * asks for to write a batch (after its lease was checked, before the fence; never a partition claim,
 * whose freeze would leave nothing for the fence to refuse) stops the
 * whole process, so the pause lands at the one place where only the database's fence can refuse the batch.
 * When {@code freeze-in-transaction} appears, the process stops right after the next batch's fence statement,
 * inside its transaction, holding the partition's row. Either way the consumer's thread says so and waits there;
 * the test stops the process with SIGSTOP, writes {@code resume} and later continues it with SIGCONT.
 */
public final class LedgerChild {

    private LedgerChild() {
    }

    public static void main(String[] args) throws Exception {
        String redis = args[0];
        String jdbc = args[1];
        String name = args[2];
        Path control = Path.of(args[3]);
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(jdbc);
        hc.setMaximumPoolSize(2);
        hc.setConnectionTimeout(5_000);
        HikariDataSource pool = new HikariDataSource(hc);
        Map<String, Object> settings = new HashMap<>();
        settings.put("warden.quota.endpoint", redis);
        settings.put("warden.quota.request-timeout", "3s");
        settings.put("warden.lock.ttl", "2s");
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        settings.put("warden.quota.connect-timeout", "20s");
        settings.put("warden.lock.connect-timeout", "20s");
        LedgerConsumer consumer = LedgerConsumer.builder(settings, freezable(pool, control.resolve("freeze"),
                        control.resolve("freeze-in-transaction")))
                .consumerName(name).batchSize(100).blockTime(Duration.ofMillis(200)).sweepInterval(Duration.ofMillis(300))
                .rebalanceInterval(Duration.ofMillis(300)).retryBackoff(Duration.ofMillis(20), Duration.ofMillis(500))
                .listener(new LedgerListener() {
                    @Override
                    public void partitionTaken(int partition, long token) {
                        say("TOOK " + partition + " " + token);
                    }

                    @Override
                    public void partitionLost(int partition) {
                        say("LOST " + partition);
                    }

                    @Override
                    public void fenced(int partition, long token) {
                        say("FENCED " + partition + " " + token);
                    }

                    @Override
                    public void batchCommitted(Batch batch) {
                        say("BATCH " + batch.partition() + " " + batch.entries());
                    }
                }).start();
        say("STARTED " + consumer.consumerName());
        Thread.sleep(Long.MAX_VALUE);
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    private static DataSource freezable(DataSource real, Path freeze, Path freezeInTransaction) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && writingABatch() && Files.deleteIfExists(freeze)) {
                        say("FREEZING");
                        parkUntilResumed(freeze.resolveSibling("resume"));
                        say("RESUMED");
                    }
                    Object result = invoke(method, real, args);
                    return result instanceof Connection c ? inTransaction(c, freezeInTransaction) : result;
                });
    }

    /** A connection whose batch fence statement, once it has run, stops the process when asked to. */
    private static Connection inTransaction(Connection real, Path freeze) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class},
                (proxy, method, args) -> {
                    Object result = invoke(method, real, args);
                    if (method.getName().equals("prepareStatement") && args != null && args[0] instanceof String sql
                            && sql.startsWith("UPDATE ledger_partitions")) {
                        PreparedStatement ps = (PreparedStatement) result;
                        return Proxy.newProxyInstance(PreparedStatement.class.getClassLoader(),
                                new Class<?>[]{PreparedStatement.class}, (p, m, a) -> {
                                    Object r = invoke(m, ps, a);
                                    if ((m.getName().equals("executeUpdate") || m.getName().equals("executeQuery"))
                                            && writingABatch() && Files.deleteIfExists(freeze)) {
                                        say("FREEZING-IN-TRANSACTION");
                                        parkUntilResumed(freeze.resolveSibling("resume"));
                                        say("RESUMED");
                                    }
                                    return r;
                                });
                    }
                    return result;
                });
    }

    private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /**
     * Whether this connection is for a batch (or a round of batches) about to be written: the freeze must
     * not land on a partition claim or a compensation record, where no fence can refuse anything.
     */
    private static boolean writingABatch() {
        return StackWalker.getInstance().walk(frames -> frames.anyMatch(f -> f.getMethodName().equals("writeWithRetry")
                || f.getMethodName().equals("writeTogetherWithRetry")));
    }

    /**
     * Waits here until the file {@code resume} appears, which the test writes once it has stopped this process
     * (SIGSTOP) and before it continues it (SIGCONT): the thread is held at this point for the whole stop. A
     * process that stopped itself ran on for a few milliseconds after {@code kill -STOP} returned, now and then
     * past the fence into the batch's transaction, where the test then found it.
     */
    private static void parkUntilResumed(Path resume) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MINUTES.toNanos(2);
        while (!Files.exists(resume)) {
            if (System.nanoTime() - deadline > 0) {
                say("NOT-RESUMED"); // the test never stopped and released this process: fail loudly, hang nowhere
                throw new IllegalStateException("no " + resume + " within 2 minutes");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(2_000_000); // the file is the condition; a stopped process polls nothing
        }
    }
}
