package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;

import java.util.Map;

/** acquire + release through Warden's API, on whichever backend the settings name. */
public final class WardenLock implements Workload {

    private final CriticalSection shared = new CriticalSection();

    private final String implementation;
    private final Map<String, Object> settings;
    private final boolean contended;
    private LockClient client;
    private DistributedLock[] locks;

    public WardenLock(String implementation, Map<String, Object> settings, boolean contended) {
        this.implementation = implementation;
        this.settings = settings;
        this.contended = contended;
    }

    @Override
    public String scenario() {
        return contended ? "lock, contended (one name)" : "lock, uncontended (a name per thread)";
    }

    @Override
    public boolean onRedis() {
        return "redis".equals(String.valueOf(settings.get("warden.lock.backend")));
    }

    @Override
    public String implementation() {
        return implementation;
    }

    @Override
    public void setUp(int threads) {
        client = LockClient.create(settings);
        locks = new DistributedLock[threads];
        for (int i = 0; i < threads; i++) {
            locks[i] = client.lock(contended ? "bench-hot" : "bench-" + i);
        }
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contended ? shared : new CriticalSection();
        DistributedLock lock = locks[index];
        return () -> {
            try (Lease lease = lock.acquire()) {
                if (!lease.isValid()) {
                    throw new IllegalStateException("granted an invalid lease");
                }
                section.run();
            }
        };
    }

    @Override
    public void close() {
        if (client != null) {
            client.close();
        }
    }
}
