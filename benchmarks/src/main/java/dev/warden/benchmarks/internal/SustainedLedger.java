package dev.warden.benchmarks.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnector;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The money path at full speed for a sustained time: the engine deducts as fast as it can
 * (asynchronous, a window in flight per thread) while {@code n} ledger consumers drain the journals
 * into durable PostgreSQL. Reports the engine's rate, the ledger's rate over the same window, the
 * backlog at the end and how long it took to drain, and Redis's memory before and after. Then each side
 * alone, for its CPU per operation in the same run: the engine with the consumers stopped, then the
 * consumers on what it left.
 */
public final class SustainedLedger {

    /**
     * One run's figures.
     *
     * @param pacedRate          deductions per second asked for, 0 for as fast as the engine goes
     * @param cpuPerDeduction    CPU µs of every process (this JVM, Redis, PostgreSQL) during the load, per deduction
     * @param ledgerCpuPerEntry  CPU µs of every process while the backlog drained (the engine idle), per entry drained;
     *                           NaN when too little was left to drain
     * @param engineCpuAlone     CPU µs of every process per deduction while the engine ran alone (the consumers
     *                           stopped), after the load
     * @param ledgerCpuAlone     CPU µs of every process per entry while the consumers, started again, drained what
     *                           the engine left alone (the engine idle), from when they held every partition
     * @param engineAlone        {@code engineCpuAlone} by process
     * @param ledgerAlone        {@code ledgerCpuAlone} by process
     */
    public record Row(int consumers, int threads, int pacedRate, double seconds, long deductions, long ledgerEntries,
                      long backlogAtEnd, long maxBacklog, long longestJournal, double drainSeconds, long redisMemoryBefore,
                      long redisMemoryAfter, double cpuPerDeduction, double ledgerCpuPerEntry, double engineCpuAlone,
                      double ledgerCpuAlone, Split engineAlone, Split ledgerAlone) {

        public double deductionsPerSecond() {
            return deductions / seconds;
        }

        public double ledgerPerSecond() {
            return ledgerEntries / seconds;
        }

        public String toJson() {
            return String.format(Locale.ROOT, "{\"scenario\":\"ledger, sustained\",\"consumers\":%d,\"threads\":%d,"
                            + "\"pacedRate\":%d,\"seconds\":%.1f,\"deductionsPerSecond\":%.1f,\"ledgerEntriesPerSecond\":%.1f,"
                            + "\"ratio\":%.3f,\"backlogAtEnd\":%d,\"maxBacklog\":%d,\"longestJournal\":%d,\"drainSeconds\":%.2f,"
                            + "\"redisUsedMemoryBefore\":%d,\"redisUsedMemoryAfter\":%d,\"cpuUsPerDeduction\":%.1f,"
                            + "\"ledgerCpuUsPerEntry\":%s,\"engineCpuUsPerDeductionAlone\":%.1f,"
                            + "\"ledgerCpuUsPerEntryAlone\":%.1f,\"engineCpuUsAloneByProcess\":%s,"
                            + "\"ledgerCpuUsAloneByProcess\":%s}", consumers, threads, pacedRate, seconds,
                    deductionsPerSecond(), ledgerPerSecond(), ledgerPerSecond() / deductionsPerSecond(), backlogAtEnd,
                    maxBacklog, longestJournal, drainSeconds, redisMemoryBefore, redisMemoryAfter, cpuPerDeduction,
                    Double.isNaN(ledgerCpuPerEntry) ? "null" : String.format(Locale.ROOT, "%.1f", ledgerCpuPerEntry),
                    engineCpuAlone, ledgerCpuAlone, engineAlone.toJson(), ledgerAlone.toJson());
        }
    }

    /** CPU µs per operation of each process: this JVM (the engine's client and the consumers), Redis, PostgreSQL. */
    public record Split(double jvm, double redis, double postgres) {

        String toJson() {
            return String.format(Locale.ROOT, "{\"jvm\":%.1f,\"redis\":%.1f,\"postgres\":%.1f}", jvm, redis, postgres);
        }

        String text() {
            return String.format(Locale.ROOT, "%.1f / %.1f / %.1f", jvm, redis, postgres);
        }
    }

    /** CPU used so far by each process. */
    private record Cpu(Duration jvm, Duration redis, Duration postgres) {

        Cpu minus(Cpu earlier) {
            return new Cpu(jvm.minus(earlier.jvm), redis.minus(earlier.redis), postgres.minus(earlier.postgres));
        }

        Duration total() {
            return jvm.plus(redis).plus(postgres);
        }

        Split per(long operations) {
            double n = Math.max(1, operations);
            return new Split(jvm.toNanos() / 1e3 / n, redis.toNanos() / 1e3 / n, postgres.toNanos() / 1e3 / n);
        }
    }

    private static final int ACCOUNTS = 1_000;
    /** How long the engine runs alone after the load, for its CPU per deduction; the consumers then drain it. */
    private static final Duration ALONE = Duration.ofSeconds(10);
    private static final int WINDOW = 32;
    private static final long INITIAL = 1L << 50;

    private final RedisServer redis;
    private final PostgresServer postgres;
    private final Duration duration;
    private final int threads;

    public SustainedLedger(RedisServer redis, PostgresServer postgres, Duration duration, int threads) {
        this.redis = redis;
        this.postgres = postgres;
        this.duration = duration;
        this.threads = threads;
    }

    /** @param pacedRate deductions per second, or 0 for as fast as the engine goes */
    public Row run(int consumers, int pacedRate) throws InterruptedException {
        String namespace = "ledger-bench-" + consumers + "-" + Long.toHexString(System.nanoTime());
        String schema = namespace.replace('-', '_');
        postgres.psql("CREATE SCHEMA " + schema);
        Map<String, Object> settings = new HashMap<>();
        settings.put("warden.quota.endpoint", redis.uri());
        settings.put("warden.quota.namespace", namespace);
        settings.put("warden.lock.ttl", "10s");
        settings.put("warden.quota.connect-timeout", "30s"); // a cold JVM on a busy machine: seen to miss the default 5 s
        KeyLayout layout = new KeyLayout(namespace, 16);
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(postgres.jdbcUrl() + (postgres.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        hc.setMaximumPoolSize(2 * consumers + 2);
        List<LedgerConsumer> running = new ArrayList<>();
        try (HikariDataSource ds = new HikariDataSource(hc); QuotaService quota = QuotaService.create(settings)) {
            Ledger.migrate(ds);
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < ACCOUNTS; i++) {
                String a = "acct-" + i;
                quota.open(a, INITIAL);
                accounts.add(a);
            }
            for (int i = 0; i < consumers; i++) {
                running.add(LedgerConsumer.builder(settings, ds).consumerName("bench-" + i).build().start());
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (running.stream().mapToInt(c -> c.partitions().size()).sum() < 16 || backlog(running) > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the consumers did not take the 16 partitions");
                }
                LockSupport.parkNanos(50_000_000);
            }
            long memoryBefore = usedMemory();
            long appliedBefore = applied(running);
            Duration cpuAtStart = cpu();

            AtomicLong deductions = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            long end = System.nanoTime() + duration.toNanos();
            List<Thread> load = load(quota, accounts, end, pacedRate, "s", deductions, failures);
            long started = System.nanoTime();
            long maxBacklog = 0;
            long longest = 0;
            while (System.nanoTime() - end < 0) {
                LockSupport.parkNanos(1_000_000_000L);
                maxBacklog = Math.max(maxBacklog, backlog(running));
                longest = Math.max(longest, longestJournal(layout));
            }
            for (Thread th : load) {
                th.join();
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long ledgerEntries = applied(running) - appliedBefore;
            long backlogAtEnd = backlog(running);
            Duration cpuAtLoadEnd = cpu();
            long appliedAtLoadEnd = applied(running);
            long drainStart = System.nanoTime();
            while (backlog(running) > 0) {
                LockSupport.parkNanos(20_000_000);
            }
            double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
            Duration cpuAtDrainEnd = cpu();
            long drained = applied(running) - appliedAtLoadEnd;
            double cpuPerDeduction = cpuAtLoadEnd.minus(cpuAtStart).toNanos() / 1e3 / Math.max(1, deductions.get());
            double ledgerCpuPerEntry = drained < 10_000 ? Double.NaN
                    : cpuAtDrainEnd.minus(cpuAtLoadEnd).toNanos() / 1e3 / drained;
            long memoryAfter = usedMemory();

            // Each side alone, in this run: the engine with the consumers stopped, then the consumers, started again,
            // on what it left. Their CPU per operation, every process counted (this JVM, Redis, PostgreSQL).
            for (LedgerConsumer c : running) {
                c.close();
            }
            running.clear();
            AtomicLong aloneDeductions = new AtomicLong();
            Cpu cpuAloneStart = byProcess();
            for (Thread th : load(quota, accounts, System.nanoTime() + ALONE.toNanos(), 0, "a", aloneDeductions, failures)) {
                th.join();
            }
            Cpu cpuEngineAlone = byProcess().minus(cpuAloneStart);
            for (int i = 0; i < consumers; i++) {
                running.add(LedgerConsumer.builder(settings, ds).consumerName("bench-alone-" + i).build().start());
            }
            // Counted from when each consumer holds its share of the partitions: their start (connections, locks,
            // claims, the partitions moving to the consumers that started last) is not the cost of an entry.
            deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
            while (running.stream().mapToInt(c -> c.partitions().size()).sum() < 16
                    || running.stream().anyMatch(c -> c.partitions().size() < 16 / consumers)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the consumers did not take the 16 partitions");
                }
                LockSupport.parkNanos(5_000_000);
            }
            Cpu cpuLedgerStart = byProcess();
            long appliedAtStart = applied(running);
            while (backlog(running) > 0) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the consumers did not drain what the engine left alone");
                }
                LockSupport.parkNanos(100_000_000); // the watching costs CPU too: seldom
            }
            Cpu cpuLedgerAlone = byProcess().minus(cpuLedgerStart);
            long drainedAlone = applied(running) - appliedAtStart;
            double engineCpuAlone = cpuEngineAlone.total().toNanos() / 1e3 / Math.max(1, aloneDeductions.get());
            double ledgerCpuAlone = cpuLedgerAlone.total().toNanos() / 1e3 / Math.max(1, drainedAlone);

            if (failures.get() > 0) {
                throw new IllegalStateException(failures.get() + " deductions failed");
            }
            long acknowledged = deductions.get() + aloneDeductions.get();
            long ledgerSum = Long.parseLong(postgres.psql("SET search_path TO " + schema
                    + "; SELECT COUNT(*) FROM ledger_entries WHERE kind = 'deduct'"));
            if (ledgerSum != acknowledged) {
                throw new IllegalStateException("the ledger holds " + ledgerSum + " deductions, " + acknowledged
                        + " were acknowledged");
            }
            return new Row(consumers, threads, pacedRate, seconds, deductions.get(), ledgerEntries, backlogAtEnd, maxBacklog,
                    longest, drainSeconds, memoryBefore, memoryAfter, cpuPerDeduction, ledgerCpuPerEntry, engineCpuAlone,
                    ledgerCpuAlone, cpuEngineAlone.per(aloneDeductions.get()), cpuLedgerAlone.per(drainedAlone));
        } finally {
            for (LedgerConsumer c : running) {
                c.close();
            }
        }
    }

    /**
     * {@link #threads} threads deducting until {@code end}, a window of {@link #WINDOW} in flight each (paced when
     * {@code pacedRate} > 0), request ids {@code <prefix>-<thread>-<n>}; started.
     */
    private List<Thread> load(QuotaService quota, List<String> accounts, long end, int pacedRate, String prefix,
                              AtomicLong deductions, AtomicLong failures) {
        List<Thread> load = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            Thread th = new Thread(() -> {
                long seq = 0;
                long windows = 0;
                long begun = System.nanoTime();
                while (System.nanoTime() - end < 0) {
                    if (pacedRate > 0) {
                        // Each thread sends its share of the rate, a window at a time.
                        long due = begun + (long) (windows++ * WINDOW * (double) threads / pacedRate * 1e9);
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                    }
                    CompletableFuture<?>[] window = new CompletableFuture<?>[WINDOW];
                    for (int i = 0; i < WINDOW; i++) {
                        String a = accounts.get(ThreadLocalRandom.current().nextInt(ACCOUNTS));
                        window[i] = quota.deductAsync(a, 1, prefix + "-" + thread + "-" + seq++).toCompletableFuture()
                                .whenComplete((o, e) -> {
                                    if (e == null && o instanceof Outcome.Applied) {
                                        deductions.incrementAndGet();
                                    } else {
                                        failures.incrementAndGet();
                                    }
                                });
                    }
                    CompletableFuture.allOf(window).exceptionally(e -> null).join();
                }
            }, "ledger-bench-load-" + t);
            th.start();
            load.add(th);
        }
        return load;
    }

    private static long backlog(List<LedgerConsumer> consumers) {
        return consumers.get(0).backlog(); // every consumer's candidates are all 16 partitions
    }

    private static long applied(List<LedgerConsumer> consumers) {
        return consumers.stream().mapToLong(c -> c.stats().applied()).sum();
    }

    /** CPU used so far by this JVM (engine client and consumers), Redis and PostgreSQL together. */
    private Duration cpu() {
        return byProcess().total();
    }

    /**
     * CPU used so far by each: this JVM, Redis, PostgreSQL (its processes alive now: a backend that exited took its
     * time with it, so a phase is read while its connections stay open).
     */
    private Cpu byProcess() {
        return new Cpu(ServerCpu.thisProcess(), ServerCpu.descendants("redis-server"), ServerCpu.descendants("postgres"));
    }

    private long usedMemory() {
        return Long.parseLong(RedisConnector.infoField(String.valueOf(redis.command("INFO", "memory")), "used_memory"));
    }

    private long longestJournal(KeyLayout layout) {
        long longest = 0;
        for (int p = 0; p < layout.partitions(); p++) {
            longest = Math.max(longest, Long.parseLong(String.valueOf(redis.command("XLEN", layout.journal(p)))));
        }
        return longest;
    }

    /** The markdown table of the rows. */
    public static String markdown(List<Row> rows) {
        StringBuilder b = new StringBuilder("| engine | consumers | engine deductions/s | ledger entries/s | ledger ÷ engine |"
                + " backlog at end | largest backlog | longest journal | drain s | CPU µs per deduction (all) |"
                + " ledger CPU µs per entry (drain) | engine alone: CPU µs per deduction | ledger alone: CPU µs per entry |"
                + " engine alone by process: JVM / Redis / PostgreSQL | ledger alone by process: JVM / Redis / PostgreSQL |"
                + " Redis used_memory before → after |\n"
                + "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "| %s | %d | %,.0f | %,.0f | %.2f | %,d | %,d | %,d | %.1f | %.1f | %s | %.1f | %.1f | %s | %s | %.1f MB → %.1f MB |%n",
                    r.pacedRate() == 0 ? "full speed" : String.format(Locale.ROOT, "paced %,d/s", r.pacedRate()),
                    r.consumers(), r.deductionsPerSecond(), r.ledgerPerSecond(), r.ledgerPerSecond() / r.deductionsPerSecond(),
                    r.backlogAtEnd(), r.maxBacklog(), r.longestJournal(), r.drainSeconds(), r.cpuPerDeduction(),
                    Double.isNaN(r.ledgerCpuPerEntry()) ? "–" : String.format(Locale.ROOT, "%.1f", r.ledgerCpuPerEntry()),
                    r.engineCpuAlone(), r.ledgerCpuAlone(), r.engineAlone().text(), r.ledgerAlone().text(),
                    r.redisMemoryBefore() / 1e6, r.redisMemoryAfter() / 1e6));
        }
        return b.toString();
    }
}
