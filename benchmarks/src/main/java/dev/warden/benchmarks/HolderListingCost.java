package dev.warden.benchmarks;

import dev.warden.lock.Lease;
import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockClient;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.ZooKeeperServer;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * What an operator's listing costs: N locks held in one namespace (by one client, taken asynchronously),
 * then {@code LockAdmin.holders()} from another client, timed over a few runs, on each backend on
 * testkit's servers (Redis standalone and a 3-primary Cluster, etcd, ZooKeeper). Prints one line per
 * backend: {@code LISTING <backend> holders=N best=ms median=ms per-holder=µs}.
 *
 * <pre>
 * java -cp "benchmarks/target/benchmarks-0.1.0-SNAPSHOT.jar:$(cat benchmarks/cp.txt)" dev.warden.benchmarks.HolderListingCost 10000 5
 * </pre>
 */
public final class HolderListingCost {

    private HolderListingCost() {
    }

    public static void main(String[] args) throws Exception {
        int holders = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int runs = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        try (RedisServer redis = RedisServer.start()) {
            measure("redis", Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.uri()), holders, runs);
        }
        try (RedisCluster cluster = RedisCluster.builder().start()) {
            measure("redis-cluster", Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", cluster.uri()), holders, runs);
        }
        try (EtcdServer etcd = EtcdServer.start()) {
            measure("etcd", Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.endpoints()), holders, runs);
        }
        try (ZooKeeperServer zookeeper = ZooKeeperServer.start()) {
            measure("zookeeper", Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", zookeeper.endpoint()),
                    holders, runs);
        }
    }

    private static void measure(String backend, Map<String, Object> base, int holders, int runs) throws Exception {
        Map<String, Object> settings = new java.util.HashMap<>(base);
        settings.put("warden.lock.namespace", "listing");
        settings.put("warden.lock.ttl", "60s");
        settings.put("warden.lock.request-timeout", "30s");
        // A fresh JVM on a busy machine can spend the default 5 s loading Netty before its first connection.
        settings.put("warden.lock.connect-timeout", "30s");
        try (LockClient holding = LockClient.create(settings); LockClient operator = LockClient.create(settings)) {
            List<Lease> held = new ArrayList<>(holders);
            for (int from = 0; from < holders; from += 500) {
                List<CompletableFuture<Lease>> batch = new ArrayList<>();
                for (int i = from; i < Math.min(holders, from + 500); i++) {
                    batch.add(holding.lock("merchant:" + i).acquireAsync());
                }
                for (CompletableFuture<Lease> f : batch) {
                    held.add(f.join());
                }
            }
            LockAdmin admin = operator.admin();
            List<Long> millis = new ArrayList<>();
            for (int r = 0; r < runs; r++) {
                long t0 = System.nanoTime();
                int listed = admin.holders().size();
                millis.add((System.nanoTime() - t0) / 1_000_000);
                if (listed != holders) {
                    throw new IllegalStateException(backend + ": listed " + listed + " of " + holders + " holders");
                }
            }
            millis.sort(Long::compare);
            long median = millis.get(millis.size() / 2);
            System.out.printf("LISTING %s holders=%d best=%d ms median=%d ms per-holder=%.1f µs (runs %s)%n", backend, holders,
                    millis.get(0), median, median * 1000.0 / holders, millis);
        }
    }
}
