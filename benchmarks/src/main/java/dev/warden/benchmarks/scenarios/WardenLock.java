package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;

import java.util.Map;

/** acquire + release through Warden's API, on whichever backend the settings name. */
public final class WardenLock implements Workload {

    private final CriticalSection shared = new CriticalSection();
    private final PostgresCpu postgresCpu = new PostgresCpu();
    private final PerThread perThread = new PerThread();

    private final String implementation;
    private final Map<String, Object> settings;
    private final LockContention contention;
    private LockClient[] clients;
    private DistributedLock[] locks;
    private String note = "";

    public WardenLock(String implementation, Map<String, Object> settings, boolean contended) {
        this(implementation, settings, LockContention.of(contended));
    }

    public WardenLock(String implementation, Map<String, Object> settings, LockContention contention) {
        this.implementation = implementation;
        this.settings = settings;
        this.contention = contention;
    }

    @Override
    public String scenario() {
        return contention.scenario();
    }

    @Override
    public Server server() {
        return serverOf(settings);
    }

    /** The server Warden's lock runs on under {@code settings}: while migrating, the backend switched to. */
    static Server serverOf(Map<String, Object> settings) {
        return switch (String.valueOf(settings.get("warden.lock.backend"))) {
            case "redis" -> Server.REDIS;
            case "etcd" -> Server.ETCD;
            case "zookeeper" -> Server.ZOOKEEPER;
            default -> Server.NONE;
        };
    }

    @Override
    public String implementation() {
        return implementation;
    }

    @Override
    public void setUp(int threads) {
        clients = new LockClient[contention.clientPerThread() ? threads : 1];
        for (int i = 0; i < clients.length; i++) {
            clients[i] = LockClient.create(connectingPatiently(settings));
        }
        locks = new DistributedLock[threads];
        for (int i = 0; i < threads; i++) {
            locks[i] = clients[contention.clientPerThread() ? i : 0].lock(contention.contended() ? "bench-hot" : "bench-" + i);
        }
        if (countsPerThread()) {
            perThread.setUp(threads);
        }
        if (onPostgres()) {
            postgresCpu.start();
        }
    }

    /** Fairness shows in how evenly the threads were granted: on PostgreSQL when contended, and with a client per thread. */
    private boolean countsPerThread() {
        return contention.contended() && (onPostgres() || contention.clientPerThread());
    }

    private boolean onPostgres() {
        return "jdbc".equals(String.valueOf(settings.get("warden.lock.backend")));
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contention.contended() ? shared : new CriticalSection();
        DistributedLock lock = locks[index];
        boolean counted = countsPerThread();
        return () -> {
            try (Lease lease = lock.acquire()) {
                if (!lease.isValid()) {
                    throw new IllegalStateException("granted an invalid lease");
                }
                section.run();
            }
            if (counted) {
                perThread.acquired(index);
            }
        };
    }

    @Override
    public void verify(long completed) {
        note = PerThread.join(countsPerThread() ? perThread.note() : "",
                postgresCpu.perOperation(completed));
    }

    @Override
    public String note() {
        return note;
    }

    @Override
    public void close() {
        if (clients != null) {
            for (LockClient client : clients) {
                if (client != null) {
                    client.close();
                }
            }
        }
    }

    /** Connecting is not what a row measures: a cold JVM beside another build once took over the 5 s default. */
    static java.util.Map<String, Object> connectingPatiently(java.util.Map<String, ?> settings) {
        java.util.Map<String, Object> s = new java.util.LinkedHashMap<>(settings);
        s.putIfAbsent("warden.lock.connect-timeout", "30s");
        return s;
    }
}
