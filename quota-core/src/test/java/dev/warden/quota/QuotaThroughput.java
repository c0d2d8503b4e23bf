package dev.warden.quota;

import dev.warden.quota.internal.KeyLayout;
import dev.warden.quota.internal.Scripts;
import dev.warden.testkit.RedisServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A quick throughput figure, not a test and not a benchmark of record (that is the benchmarks
 * module's job): sync, async and batch deductions through the service with N threads, then the
 * same deduct script driven by redis-benchmark and by redis-cli --pipe against the same server.
 * Prints figures and checks only correctness (every applied deduction is in the balances).
 *
 * <pre>
 * mvn -q -pl quota-core dependency:build-classpath -Dmdep.outputFile=/tmp/quota-cp.txt -Dmdep.includeScope=test
 * java -cp quota-core/target/test-classes:quota-core/target/classes:$(cat /tmp/quota-cp.txt) \
 *     dev.warden.quota.QuotaThroughput [threads=16] [seconds=5]
 * </pre>
 */
public final class QuotaThroughput {

    private static final int ACCOUNTS = 1_000;
    private static final long INITIAL = 1L << 40;
    private static final int WINDOW = 64;
    private static final int BATCH = 100;

    private QuotaThroughput() {
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        int seconds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        KeyLayout layout = new KeyLayout(16);
        try (RedisServer server = RedisServer.start();
             QuotaService quota = QuotaService.create(Map.of("warden.quota.endpoint", server.uri()))) {
            System.out.printf("redis-server %s, %d threads, %d s per run, %d accounts, %d cores%n", server.uri(), threads,
                    seconds, ACCOUNTS, Runtime.getRuntime().availableProcessors());
            List<String> accounts = new ArrayList<>();
            for (int i = 0; i < ACCOUNTS; i++) {
                accounts.add("bench-" + i);
                quota.open("bench-" + i, INITIAL);
            }
            AtomicLong applied = new AtomicLong();

            run("warm-up (discarded)", threads, 2, applied, () -> sync(quota, accounts));
            run("sync deduct", threads, seconds, applied, () -> sync(quota, accounts));
            run("async deduct, " + WINDOW + " in flight per thread", threads, seconds, applied,
                    () -> asyncWindow(quota, accounts));
            run("batch deductAll, " + BATCH + " per call", threads, seconds, applied, () -> batch(quota, accounts));

            long deducted = 0;
            for (String a : accounts) {
                deducted += INITIAL - quota.balance(a).orElseThrow();
            }
            System.out.printf("check: %d deductions of 1 applied, balances fell by %d: %s%n", applied.get(), deducted,
                    applied.get() == deducted ? "OK" : "MISMATCH");

            redisBenchmark(server, layout);
            redisCliPipe(server, layout);
        }
    }

    interface Worker {
        long runFor(long deadlineNanos) throws Exception;
    }

    private static void run(String name, int threads, int seconds, AtomicLong applied, java.util.function.Supplier<Worker> worker)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            long start = System.nanoTime();
            long deadline = start + TimeUnit.SECONDS.toNanos(seconds);
            List<Future<Long>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Worker w = worker.get();
                futures.add(pool.submit(() -> w.runFor(deadline)));
            }
            long ops = 0;
            for (Future<Long> f : futures) {
                ops += f.get();
            }
            double elapsed = (System.nanoTime() - start) / 1e9;
            applied.addAndGet(ops);
            System.out.printf("%-45s %10.0f ops/s  (%d ops in %.2f s)%n", name, ops / elapsed, ops, elapsed);
        } finally {
            pool.shutdownNow();
        }
    }

    private static Worker sync(QuotaService quota, List<String> accounts) {
        return deadline -> {
            long ops = 0;
            while (System.nanoTime() < deadline) {
                Outcome o = quota.deduct(pick(accounts), 1, UUID.randomUUID().toString());
                if (!(o instanceof Outcome.Applied)) {
                    throw new IllegalStateException(o.toString());
                }
                ops++;
            }
            return ops;
        };
    }

    private static Worker asyncWindow(QuotaService quota, List<String> accounts) {
        return deadline -> {
            Semaphore window = new Semaphore(WINDOW);
            AtomicLong ops = new AtomicLong();
            AtomicLong failures = new AtomicLong();
            while (System.nanoTime() < deadline) {
                window.acquire();
                quota.deductAsync(pick(accounts), 1, UUID.randomUUID().toString()).whenComplete((o, e) -> {
                    if (e == null && o instanceof Outcome.Applied) {
                        ops.incrementAndGet();
                    } else {
                        failures.incrementAndGet();
                    }
                    window.release();
                });
            }
            window.acquire(WINDOW);
            if (failures.get() > 0) {
                throw new IllegalStateException(failures.get() + " async deductions failed");
            }
            return ops.get();
        };
    }

    private static Worker batch(QuotaService quota, List<String> accounts) {
        return deadline -> {
            long ops = 0;
            while (System.nanoTime() < deadline) {
                List<Deduction> batch = new ArrayList<>(BATCH);
                for (int i = 0; i < BATCH; i++) {
                    batch.add(new Deduction(pick(accounts), 1, UUID.randomUUID().toString()));
                }
                for (Outcome o : quota.deductAll(batch)) {
                    if (!(o instanceof Outcome.Applied)) {
                        throw new IllegalStateException(o.toString());
                    }
                    ops++;
                }
            }
            return ops;
        };
    }

    private static String pick(List<String> accounts) {
        return accounts.get(ThreadLocalRandom.current().nextInt(accounts.size()));
    }

    /** The deduct script's arguments for one account and request id. */
    private static List<String> deductArgs(KeyLayout layout, String account, String request) {
        int p = layout.partition(account);
        return List.of("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", layout.marker(p), layout.accountKey(account),
                layout.requestKey(account, request), layout.journal(p), account, "1", request, "-", "86400000",
                layout.markerValue());
    }

    /**
     * redis-benchmark repeats one command: with one request id every call after the first is an
     * idempotent replay (validate, marker, record lookup, reply), the script's read path. Its
     * __rand_int__ draws a new number per occurrence, so the key and the argument naming the request
     * id cannot be made to agree: it cannot drive the write path.
     */
    private static void redisBenchmark(RedisServer server, KeyLayout layout) throws Exception {
        List<String> command = new ArrayList<>(List.of("redis-benchmark", "-h", server.host(), "-p",
                Integer.toString(server.port()), "-n", "200000", "-c", "16", "-P", "16", "-q"));
        command.addAll(deductArgs(layout, "bench-0", "bench-replay"));
        System.out.println("$ " + String.join(" ", command));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(120, TimeUnit.SECONDS);
        out.lines().filter(l -> l.contains("requests per second")).map(l -> l.substring(l.lastIndexOf('\r') + 1))
                .forEach(l -> System.out.println("  " + l.trim()));
    }

    /** The write path without Java: 200,000 distinct deductions on one connection, fully pipelined. */
    private static void redisCliPipe(RedisServer server, KeyLayout layout) throws Exception {
        int n = 200_000;
        Path file = Files.createTempFile("quota-deducts", ".resp");
        try {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < n; i++) {
                List<String> args = deductArgs(layout, "bench-" + (i % ACCOUNTS), "pipe-" + i);
                b.append('*').append(args.size()).append("\r\n");
                for (String a : args) {
                    b.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
                }
            }
            Files.writeString(file, b);
            List<String> command = List.of("redis-cli", "-h", server.host(), "-p", Integer.toString(server.port()), "--pipe");
            System.out.println("$ " + String.join(" ", command) + " < " + n + " distinct deduct EVALSHAs");
            long start = System.nanoTime();
            Process process = new ProcessBuilder(command).redirectInput(file.toFile()).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            process.waitFor(120, TimeUnit.SECONDS);
            double elapsed = (System.nanoTime() - start) / 1e9;
            System.out.printf("  redis-cli --pipe: %.0f deductions/s (%d in %.2f s); %s%n", n / elapsed, n, elapsed,
                    out.lines().filter(l -> l.contains("replies")).findFirst().orElse(out.trim()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
