package dev.warden.quota.ledger.child;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.LedgerListener;

import javax.sql.DataSource;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * whole process with SIGSTOP, so the pause lands at the one place where only the database's fence can
 * refuse the batch. The test resumes it with SIGCONT.
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
        LedgerConsumer consumer = LedgerConsumer.builder(settings, freezable(pool, control.resolve("freeze")))
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

    private static DataSource freezable(DataSource real, Path freeze) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && writingABatch() && Files.deleteIfExists(freeze)) {
                        say("FREEZING");
                        stopMyself();
                        say("RESUMED");
                    }
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    /**
     * Whether this connection is for a batch (or a round of batches) about to be written: the freeze must
     * not land on a partition claim or a compensation record, where no fence can refuse anything.
     */
    private static boolean writingABatch() {
        return StackWalker.getInstance().walk(frames -> frames.anyMatch(f -> f.getMethodName().equals("writeWithRetry")
                || f.getMethodName().equals("writeTogetherWithRetry")));
    }

    private static void stopMyself() throws IOException, InterruptedException {
        long pid = ProcessHandle.current().pid();
        new ProcessBuilder("kill", "-STOP", Long.toString(pid)).inheritIO().start().waitFor();
    }
}
