package dev.warden.lock.etcd;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.Semaphore;
import dev.warden.testkit.EtcdServer;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Not a test: prints figures. The benchmark's two shared-name rows (a semaphore of 4, and a read-write
 * lock with one writer in 8 threads; 16 threads, one name, one client) on a testkit etcd, with what the
 * server received per acquisition from its {@code /metrics}: calls started by method, and watch messages
 * sent. Runs on the classpath it is given, so one build of this class measures two builds of the driver.
 *
 * <pre>
 * mvn -q -o -pl lock-etcd test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * java -cp lock-etcd/target/test-classes:lock-etcd/target/classes:$(cat lock-etcd/target/cp.txt) \
 *     dev.warden.lock.etcd.SharedContentionMeasurement [seconds] [threads] [scenario prefix]
 * </pre>
 */
public final class SharedContentionMeasurement {

    private SharedContentionMeasurement() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        try (EtcdServer server = EtcdServer.start()) {
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("warden.lock.backend", "etcd");
            s.put("warden.lock.endpoints", server.endpoints());
            s.put("warden.lock.namespace", "measure");
            // A cold JVM's first connection on a loaded host can take over the 5 s default; connecting is not what this measures.
            s.put("warden.lock.connect-timeout", "20s");
            try (LockClient client = LockClient.create(s)) {
                for (String scenario : List.of("semaphore of 4", "read-write, 1 writer in 8")) {
                    if (args.length > 2 && !scenario.startsWith(args[2])) {
                        continue;
                    }
                    run(server, client, scenario, threads, 2, false);
                    run(server, client, scenario, threads, seconds, true);
                }
            }
        }
        System.exit(0);
    }

    private static void run(EtcdServer server, LockClient client, String scenario, int threads, int seconds,
                            boolean report) throws Exception {
        Semaphore semaphore = client.semaphore("measure-permits", 4);
        List<Long> waits = Collections.synchronizedList(new ArrayList<>());
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> running = new ArrayList<>();
        Map<String, Long> before = metrics(server);
        long cpu0 = cpu();
        long t0 = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            boolean writer = i % 8 == 0;
            DistributedLock side = writer ? client.readWriteLock("measure-rw").writeLock()
                    : client.readWriteLock("measure-rw").readLock();
            Thread t = new Thread(() -> {
                while (!stop.get()) {
                    long a = System.nanoTime();
                    try (Lease lease = scenario.startsWith("semaphore") ? semaphore.acquire() : side.acquire()) {
                        waits.add(System.nanoTime() - a);
                    }
                }
            });
            t.start();
            running.add(t);
        }
        Thread.sleep(TimeUnit.SECONDS.toMillis(seconds));
        stop.set(true);
        for (Thread t : running) {
            t.join();
        }
        long elapsed = System.nanoTime() - t0;
        long cpu = cpu() - cpu0;
        Map<String, Long> after = metrics(server);
        if (!report) {
            return;
        }
        List<Long> sorted = new ArrayList<>(waits);
        Collections.sort(sorted);
        int n = sorted.size();
        Map<String, String> per = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d > 0) {
                per.put(k, String.format("%.2f", d / (double) n));
            }
        });
        System.out.printf("%-26s %d threads: %6d acquisitions, %7.1f/s, wait p50 %6.2f ms p99 %7.2f ms, client CPU %6.0f µs/op%n"
                        + "    per acquisition: %s%n", scenario, threads, n, n / (elapsed / 1e9), sorted.get(n / 2) / 1e6,
                sorted.get(Math.min(n - 1, n * 99 / 100)) / 1e6, cpu / 1e3 / n, per);
    }

    private static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Calls started by method, and watch messages sent, from etcd's metrics. */
    private static Map<String, Long> metrics(EtcdServer server) throws Exception {
        String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.clientUrls().get(0) + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Long> m = new TreeMap<>();
        for (String line : text.split("\n")) {
            String key = null;
            if (line.startsWith("grpc_server_started_total{")) {
                key = "";
            } else if (line.startsWith("grpc_server_msg_sent_total{") && line.contains("grpc_method=\"Watch\"")) {
                key = "sent ";
            } else if (line.startsWith("grpc_server_msg_received_total{") && line.contains("grpc_method=\"Watch\"")) {
                key = "received ";
            }
            if (key != null) {
                int at = line.indexOf("grpc_method=\"") + "grpc_method=\"".length();
                m.merge(key + line.substring(at, line.indexOf('"', at)), (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)),
                        Long::sum);
            }
        }
        return m;
    }
}
