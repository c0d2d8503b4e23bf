package dev.warden.benchmarks;

import dev.warden.benchmarks.internal.Report;
import dev.warden.benchmarks.internal.Rows;
import dev.warden.benchmarks.internal.RunHeader;
import dev.warden.benchmarks.internal.Runner;
import dev.warden.benchmarks.internal.ServerCpu;
import dev.warden.benchmarks.internal.QuotaSizing;
import dev.warden.benchmarks.internal.ServerLimit;
import dev.warden.benchmarks.internal.SustainedLedger;
import dev.warden.benchmarks.scenarios.Accounts;
import dev.warden.benchmarks.scenarios.LuaDeduct;
import dev.warden.benchmarks.scenarios.WardenLock;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.ZooKeeperServer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * Runs every workload over every implementation in one process, on servers launched for the run,
 * so the ratios hold on a noisy machine. Writes {@code results.jsonl}, {@code results.md} and the pictures
 * {@link Pictures} draws from the former; exits non-zero when a workload's end state is wrong or an
 * operation failed.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
        description = "Warden's backends and the libraries users would pick instead, side by side.")
public final class Bench implements Callable<Integer> {

    @Option(names = "--threads", split = ",", defaultValue = "1,16,64", description = "thread counts for locks (default: ${DEFAULT-VALUE})")
    List<Integer> lockThreads;

    @Option(names = "--quota-threads", split = ",", defaultValue = "16", description = "thread counts for quota (default: ${DEFAULT-VALUE})")
    List<Integer> quotaThreads;

    @Option(names = "--warmup", defaultValue = "5", description = "warm-up seconds per run (default: ${DEFAULT-VALUE})")
    int warmUpSeconds;

    @Option(names = "--duration", defaultValue = "10", description = "measured seconds per run (default: ${DEFAULT-VALUE})")
    int seconds;

    @Option(names = "--only", split = ",", description = "run only workloads whose scenario or implementation contains one of these texts")
    List<String> only;

    @Option(names = "--out", defaultValue = "target/benchmarks", description = "output directory (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--ledger-consumers", split = ",", defaultValue = "1,2,4", description = "ledger consumers for the"
            + " sustained row, one run each (default: ${DEFAULT-VALUE})")
    List<Integer> ledgerConsumers;

    @Option(names = "--ledger-seconds", defaultValue = "60", description = "length of each sustained ledger run (default: ${DEFAULT-VALUE})")
    int ledgerSeconds;

    @Option(names = "--ledger-paced", split = ",", defaultValue = "10000", description = "paced engine rates (deductions/s)"
            + " for extra sustained rows with the largest consumer count; 0 for none (default: ${DEFAULT-VALUE})")
    List<Integer> ledgerPaced;

    // fallbackValue: without it picocli reads --no-cluster as true (and --cluster as false) when the default is true.
    @Option(names = "--cluster", negatable = true, defaultValue = "true", fallbackValue = "true", description = "also run Warden's Redis rows on a"
            + " 3-primary Redis Cluster (with 3 replicas), next to one server (default: ${DEFAULT-VALUE})")
    boolean cluster;

    public static void main(String[] args) {
        System.exit(new CommandLine(new Bench()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Files.createDirectories(out);
        RunHeader header = RunHeader.of(Instant.now());
        Runner runner = new Runner(Duration.ofSeconds(warmUpSeconds), Duration.ofSeconds(seconds));
        List<Result> results = new ArrayList<>();
        List<SustainedLedger.Row> ledgerRows = new ArrayList<>();
        boolean failed = false;
        // Durable settings on both sides, as production would run them: Redis with an append-only
        // file synced every second; PostgreSQL with fsync and synchronous commit (testkit's test
        // defaults turn fsync off for speed). Room for the PostgreSQL lock rows with a client per thread
        // (each a pool, Warden's also a listening connection): 64 threads open some 200 connections.
        try (RedisServer redis = RedisServer.builder().appendOnly(true).config("appendfsync", "everysec").start();
             EtcdServer etcd = EtcdServer.start();
             ZooKeeperServer zookeeper = ZooKeeperServer.start();
             PostgresServer postgres = PostgresServer.builder().setting("fsync", "on").setting("full_page_writes", "on")
                     .setting("synchronous_commit", "on").setting("max_connections", "500").start();
             RedisCluster redisCluster = cluster && (selected("warden redis warden lua cluster")
                     || selected("quota deduct, one hot account warden lua, sync, 8 buckets, 3-primary cluster"))
                     ? RedisCluster.builder().appendOnly(true).config("appendfsync", "everysec").start() : null) {
            Rows.Servers servers = new Rows.Servers(redis, etcd, zookeeper, postgres);
            List<Supplier<Workload>> lockWorkloads = Rows.locks(servers);
            List<Supplier<Workload>> quotaWorkloads = Rows.quota(servers);
            Map<Workload.Server, ServerCpu> cpu = ServerCpu.ofServers(redis);
            failed |= runAll(runner, lockWorkloads, lockThreads, cpu, results);
            failed |= runAll(runner, Rows.recipes(servers), lockThreads, cpu, results);
            failed |= runAll(runner, quotaWorkloads, quotaThreads, cpu, results);
            if (redisCluster != null) {
                failed |= runOnCluster(runner, redisCluster, results);
            }
            if (selected("quota deduct redis-benchmark redis-cli")) {
                results.addAll(new ServerLimit(redis, seconds).measure(quotaThreads.get(0)));
            }
            if (selected("sizing")) {
                QuotaSizing.Sizes sizes = new QuotaSizing(redis).measure();
                Files.writeString(out.resolve("results-sizing.md"), sizes.markdown(), StandardCharsets.UTF_8);
                System.out.println();
                System.out.print(sizes.markdown());
            }
            if (selected("ledger, sustained")) {
                SustainedLedger sustained = new SustainedLedger(redis, postgres, Duration.ofSeconds(ledgerSeconds),
                        quotaThreads.get(0));
                List<int[]> runs = new ArrayList<>();
                for (int n : ledgerConsumers) {
                    runs.add(new int[]{n, 0});
                }
                for (int rate : ledgerPaced) {
                    if (rate > 0) {
                        runs.add(new int[]{ledgerConsumers.stream().mapToInt(Integer::intValue).max().orElse(1), rate});
                    }
                }
                for (int[] run : runs) {
                    int n = run[0];
                    System.out.printf("%-40s %d consumers, %s, %d s ... ", "ledger, sustained", n,
                            run[1] == 0 ? "full speed" : "paced " + run[1] + "/s", ledgerSeconds);
                    System.out.flush();
                    try {
                        SustainedLedger.Row row = sustained.run(n, run[1]);
                        ledgerRows.add(row);
                        System.out.printf("engine %,.0f/s, ledger %,.0f/s, backlog at end %,d, drained in %.1f s%n",
                                row.deductionsPerSecond(), row.ledgerPerSecond(), row.backlogAtEnd(), row.drainSeconds());
                    } catch (Exception e) {
                        System.out.println("FAILED: " + e);
                        failed = true;
                    }
                }
            }
        }
        results.sort(Comparator.comparing(Result::scenario).thenComparingInt(Result::threads));
        Path jsonl = out.resolve("results.jsonl");
        Report.writeJsonLines(header, results, jsonl);
        if (!ledgerRows.isEmpty()) {
            Files.write(jsonl, ledgerRows.stream().map(SustainedLedger.Row::toJson).toList(),
                    StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
            Files.writeString(out.resolve("results-ledger.md"), SustainedLedger.markdown(ledgerRows), StandardCharsets.UTF_8);
            System.out.println();
            System.out.print(SustainedLedger.markdown(ledgerRows));
        }
        String table = Report.markdown(results);
        Files.writeString(out.resolve("results.md"), table, StandardCharsets.UTF_8);
        System.out.println();
        System.out.print(table);
        if (!results.isEmpty()) {
            // From the file just written, as a kept file is redrawn: the pictures show nothing it lacks.
            Pictures.draw(jsonl, out).forEach(p -> System.out.println("wrote " + p));
        }
        return failed || results.stream().anyMatch(r -> r.errors() > 0) ? 1 : 0;
    }

    /**
     * Warden's Redis rows on a 3-primary Cluster: the same workloads, the Redis CPU summed over the six
     * nodes (and given per group in the note, for the projection to more primaries).
     */
    private boolean runOnCluster(Runner runner, RedisCluster redisCluster, List<Result> results) {
        String label = ", 3-primary cluster";
        Map<String, Object> lock = new LinkedHashMap<>(Map.of("warden.lock.backend", "redis",
                "warden.lock.endpoints", redisCluster.uri(), "warden.lock.namespace", "bench"));
        List<Supplier<Workload>> locks = new ArrayList<>();
        for (boolean contended : new boolean[] {false, true}) {
            locks.add(() -> new WardenLock("warden redis" + label, lock, contended));
        }
        List<Supplier<Workload>> quota = new ArrayList<>();
        for (Accounts accounts : Accounts.values()) {
            Map<String, Object> settings = Map.of("warden.quota.endpoint", redisCluster.uri());
            quota.add(() -> new LuaDeduct("warden lua, sync" + label, settings, accounts, LuaDeduct.Mode.SYNC));
            quota.add(() -> new LuaDeduct("warden lua, async" + label, settings, accounts, LuaDeduct.Mode.ASYNC));
            if (accounts == Accounts.HOT) {
                quota.add(() -> new LuaDeduct("warden lua, sync, 8 buckets" + label, settings, accounts,
                        LuaDeduct.Mode.SYNC, 8));
            }
        }
        List<RedisServer> primaries = redisCluster.primaries();
        List<RedisServer> replicas = redisCluster.nodes().stream().filter(n -> !primaries.contains(n)).toList();
        // One group per primary: a hot account's cost per node, unsplit (all on one) against split (over three).
        Map<String, List<RedisServer>> groups = new LinkedHashMap<>();
        for (int i = 0; i < primaries.size(); i++) {
            groups.put("primary " + (i + 1), List.of(primaries.get(i)));
        }
        groups.put("replicas", replicas);
        Map<Workload.Server, ServerCpu> cpu = Map.of(Workload.Server.REDIS, ServerCpu.ofGroups(groups));
        boolean failed = runAll(runner, locks, lockThreads, cpu, results);
        failed |= runAll(runner, quota, quotaThreads, cpu, results);
        return failed;
    }

    private boolean selected(String description) {
        return only == null || only.stream().anyMatch(description::contains);
    }

    private boolean runAll(Runner runner, List<Supplier<Workload>> workloads, List<Integer> threadCounts,
                           Map<Workload.Server, ServerCpu> cpu, List<Result> results) {
        boolean failed = false;
        for (Supplier<Workload> make : workloads) {
            for (int n : threadCounts) {
                try (Workload w = make.get()) {
                    if (!selected(w.scenario() + " " + w.implementation())) {
                        continue;
                    }
                    System.out.printf("%-40s %-30s %3d threads ... ", w.scenario(), w.implementation(), n);
                    System.out.flush();
                    Result r = runner.run(w, n, cpu.get(w.server()));
                    System.out.printf("%,12.0f ops/s  p50 %,8.0f µs  p99 %,8.0f µs  errors %d  CPU µs/op: client %.1f, %s %.1f %s%n",
                            r.throughput(), r.latencyP50Micros(), r.latencyP99Micros(), r.errors(), r.clientCpuMicros(),
                            w.server().name().toLowerCase(java.util.Locale.ROOT), r.serverCpuMicros(), r.note());
                    results.add(r);
                } catch (Exception e) {
                    System.out.println("FAILED: " + e);
                    failed = true;
                }
            }
        }
        return failed;
    }
}
