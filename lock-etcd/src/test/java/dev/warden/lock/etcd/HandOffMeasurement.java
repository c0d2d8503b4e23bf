package dev.warden.lock.etcd;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.tck.internal.HolderProcess;
import dev.warden.testkit.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Lock;
import io.etcd.jetcd.lock.LockResponse;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Not a test: prints figures. Hand-off on one contended name (two clients, one thread each, each
 * looping lock/unlock) with Warden's KV+Watch queue and with jetcd's Lock RPC on the same server;
 * then the time from a holder's kill -9 to the next grant.
 *
 * <pre>
 * mvn -q -pl lock-etcd test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
 * java -cp lock-etcd/target/test-classes:lock-etcd/target/classes:$(cat lock-etcd/target/cp.txt) dev.warden.lock.etcd.HandOffMeasurement [seconds]
 * </pre>
 */
public final class HandOffMeasurement {

    private HandOffMeasurement() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        runSeconds = seconds;
        try (EtcdServer server = EtcdServer.start()) {
            System.out.println("etcd " + server.endpoints() + ", " + seconds + " s per run, 2 contenders on one name");
            for (int round = 1; round <= 2; round++) {
                report("warden (KV + watch), round " + round, warden(server, seconds));
                report("jetcd Lock RPC,      round " + round, lockRpc(server, seconds));
            }
            killToGrant(server, 2);
            killToGrant(server, 5);
        }
        System.exit(0);
    }

    private static Map<String, Object> settings(EtcdServer server, Duration ttl) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "etcd");
        s.put("warden.lock.endpoints", server.endpoints());
        s.put("warden.lock.namespace", "measure");
        s.put("warden.lock.ttl", ttl);
        // A cold JVM's first connection on a loaded host can take over the 5 s default; connecting is not what this measures.
        s.put("warden.lock.connect-timeout", "20s");
        return s;
    }

    /** Nanos of each acquire (its wait), both contenders together. */
    private static List<Long> warden(EtcdServer server, int seconds) throws Exception {
        List<Long> waits = Collections.synchronizedList(new ArrayList<>());
        try (LockClient a = LockClient.create(settings(server, Duration.ofSeconds(10)));
             LockClient b = LockClient.create(settings(server, Duration.ofSeconds(10)))) {
            String name = "handoff-" + System.nanoTime();
            run(seconds, waits, a.lock(name), b.lock(name));
        }
        return waits;
    }

    private static void run(int seconds, List<Long> waits, DistributedLock... locks) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Thread> threads = new ArrayList<>();
        for (DistributedLock lock : locks) {
            Thread t = new Thread(() -> {
                while (System.nanoTime() - end < 0) {
                    long t0 = System.nanoTime();
                    try (Lease lease = lock.acquire()) {
                        waits.add(System.nanoTime() - t0);
                    }
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    private static List<Long> lockRpc(EtcdServer server, int seconds) throws Exception {
        List<Long> waits = Collections.synchronizedList(new ArrayList<>());
        ByteSequence name = ByteSequence.from("measure-rpc/" + System.nanoTime(), StandardCharsets.UTF_8);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        List<Thread> threads = new ArrayList<>();
        List<Client> clients = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            Client c = Client.builder().endpoints(server.clientUrls().toArray(String[]::new)).build();
            clients.add(c);
            long lease = c.getLeaseClient().grant(10).get(5, TimeUnit.SECONDS).getID();
            c.getLeaseClient().keepAlive(lease, new io.grpc.stub.StreamObserver<>() {
                @Override
                public void onNext(io.etcd.jetcd.lease.LeaseKeepAliveResponse value) {
                }

                @Override
                public void onError(Throwable t) {
                }

                @Override
                public void onCompleted() {
                }
            });
            Lock locks = c.getLockClient();
            Thread t = new Thread(() -> {
                try {
                    while (System.nanoTime() - end < 0) {
                        long t0 = System.nanoTime();
                        LockResponse held = locks.lock(name, lease).get(30, TimeUnit.SECONDS);
                        waits.add(System.nanoTime() - t0);
                        locks.unlock(held.getKey()).get(30, TimeUnit.SECONDS);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        clients.forEach(Client::close);
        return waits;
    }

    private static void report(String what, List<Long> waits) {
        List<Long> sorted = new ArrayList<>(waits);
        Collections.sort(sorted);
        int n = sorted.size();
        if (n == 0) {
            System.out.println(what + ": no grants");
            return;
        }
        System.out.printf("%s: %6d pairs, %7.1f pairs/s, acquire wait p50 %6.2f ms, p90 %6.2f ms, p99 %6.2f ms%n",
                what, n, n / (double) runSeconds, ms(sorted.get(n / 2)), ms(sorted.get(n * 9 / 10)), ms(sorted.get(Math.min(n - 1, n * 99 / 100))));
    }

    private static int runSeconds = 10;

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    /** A holder in a child JVM, a waiter queued behind it here; kill -9 the holder and time the waiter's grant. */
    private static void killToGrant(EtcdServer server, int ttlSeconds) throws Exception {
        Duration ttl = Duration.ofSeconds(ttlSeconds);
        List<Long> times = new ArrayList<>();
        try (LockClient waiter = LockClient.create(settings(server, ttl))) {
            for (int i = 0; i < 5; i++) {
                String name = "killed-" + ttlSeconds + "-" + i;
                List<Runnable> cleanUp = new ArrayList<>();
                Process holder = HolderProcess.start(name, settings(server, ttl), cleanUp::add).process();
                // Let the holder's keeper run for a while, so the kill lands at a random point between keep-alives.
                Thread.sleep(ttl.toMillis() + (long) (Math.random() * ttl.toMillis()));
                CompletableFuture<Lease> next = waiter.lock(name).acquireAsync();
                Thread.sleep(200);
                long t0 = System.nanoTime();
                new ProcessBuilder("kill", "-9", Long.toString(holder.pid())).start().waitFor();
                Lease lease = next.get(ttlSeconds * 3L, TimeUnit.SECONDS);
                times.add(System.nanoTime() - t0);
                lease.release();
                holder.waitFor(5, TimeUnit.SECONDS);
                cleanUp.forEach(Runnable::run);
            }
        }
        Collections.sort(times);
        System.out.printf("kill -9 of the holder to the next grant, TTL %d s: %s ms (median %.0f ms)%n", ttlSeconds,
                times.stream().map(t -> String.format("%.0f", ms(t))).toList(), ms(times.get(times.size() / 2)));
    }
}
