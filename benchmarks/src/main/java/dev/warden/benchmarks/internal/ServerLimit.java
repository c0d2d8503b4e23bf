package dev.warden.benchmarks.internal;

import dev.warden.benchmarks.Result;
import dev.warden.benchmarks.scenarios.Accounts;
import dev.warden.quota.QuotaService;
// The benchmarks module may reach into internals (docs/ARCHITECTURE.md, §1): the limit must run the very script
// the engine runs, under the very keys, so it needs the engine's digest and key layout.
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.internal.Scripts;
import dev.warden.testkit.RedisServer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the server itself can do with the deduct script, with no Java client in the way:
 * {@code redis-benchmark} repeating one {@code EVALSHA} (one request id, so after the first call
 * every call is an idempotent replay: the script's read path, as {@code __rand_int__} cannot make
 * a key and an argument agree), and {@code redis-cli --pipe} sending distinct deductions (the
 * write path: decrement, journal, request record) on one connection.
 */
public final class ServerLimit {

    private static final Pattern RPS = Pattern.compile("([0-9.]+) requests per second(?:, p50=([0-9.]+) msec)?");

    private final RedisServer redis;
    private final int seconds;
    private final KeyLayout layout = new KeyLayout(16);
    private final ServerCpu cpu;

    public ServerLimit(RedisServer redis, int seconds) {
        this.redis = redis;
        this.seconds = seconds;
        this.cpu = ServerCpu.of(redis);
    }

    public List<Result> measure(int clients) throws Exception {
        try (QuotaService quota = QuotaService.create(Map.of("warden.quota.endpoint", redis.uri()))) {
            for (int i = 0; i < Accounts.SPREAD.count(); i++) {
                quota.open(Accounts.SPREAD.account(i), Accounts.INITIAL);
            }
        }
        List<Result> results = new ArrayList<>();
        results.add(redisBenchmark(clients));
        results.add(redisCliPipe());
        return results;
    }

    private List<String> deduct(String account, String request) {
        int p = layout.partition(account);
        return List.of("EVALSHA", Scripts.digest(Scripts.Script.DEDUCT), "4", layout.marker(p), layout.accountKey(account),
                layout.requestKey(account, request), layout.journal(p), account, "1", request, "-", "86400000",
                layout.markerValue());
    }

    private Result redisBenchmark(int clients) throws Exception {
        int requests = Math.max(100_000, seconds * 50_000);
        List<String> command = new ArrayList<>(List.of("redis-benchmark", "-h", redis.host(), "-p",
                Integer.toString(redis.port()), "-n", Integer.toString(requests),
                "-c", Integer.toString(clients), "-P", "16", "-q"));
        command.addAll(deduct(Accounts.HOT.account(0), "bench-replay"));
        Duration cpuBefore = cpu.used();
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor(5, TimeUnit.MINUTES);
        Duration cpuUsed = cpu.used().minus(cpuBefore);
        String last = out.substring(out.lastIndexOf('\r') + 1);
        Matcher m = RPS.matcher(last);
        if (!m.find()) {
            throw new IllegalStateException("redis-benchmark said: " + out);
        }
        double rps = Double.parseDouble(m.group(1));
        double p50 = m.group(2) == null ? Double.NaN : Double.parseDouble(m.group(2)) * 1000;
        return new Result("quota deduct, one hot account", "redis-benchmark EVALSHA (replay path, -P 16)", clients, 0, 0,
                rps, p50, Double.NaN, Double.NaN, Double.NaN, 0, Double.NaN, cpuUsed.toNanos() / 1e3 / requests, String.join(" ", command));
    }

    private Result redisCliPipe() throws Exception {
        int n = Math.max(100_000, seconds * 20_000);
        Path file = Files.createTempFile("warden-deducts", ".resp");
        try {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < n; i++) {
                List<String> args = deduct(Accounts.SPREAD.account(i), "pipe-" + System.nanoTime() + "-" + i);
                b.append('*').append(args.size()).append("\r\n");
                for (String a : args) {
                    b.append('$').append(a.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(a).append("\r\n");
                }
            }
            Files.writeString(file, b);
            List<String> command = List.of("redis-cli", "-h", redis.host(), "-p", Integer.toString(redis.port()), "--pipe");
            long start = System.nanoTime();
            Duration cpuBefore = cpu.used();
            Process process = new ProcessBuilder(command).redirectInput(file.toFile()).redirectErrorStream(true).start();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            process.waitFor(5, TimeUnit.MINUTES);
            double elapsed = (System.nanoTime() - start) / 1e9;
            Duration cpuUsed = cpu.used().minus(cpuBefore);
            if (!out.contains("errors: 0")) {
                throw new IllegalStateException("redis-cli --pipe said: " + out);
            }
            return new Result("quota deduct, " + Accounts.SPREAD.label(), "redis-cli --pipe EVALSHA (write path, 1 connection)",
                    1, n, elapsed, n / elapsed, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, Double.NaN, cpuUsed.toNanos() / 1e3 / n,
                    String.join(" ", command) + " < " + n + " distinct deduct EVALSHAs");
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
