package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** Baseline: Redisson's {@code RLock} lock + unlock on the same server. */
public final class RedissonLock implements Workload {

    private final CriticalSection shared = new CriticalSection();

    private final String redisUri;
    private final boolean contended;
    private final String namespace;
    private RedissonClient client;
    private RLock[] locks;

    public RedissonLock(String redisUri, boolean contended, String namespace) {
        this.redisUri = redisUri;
        this.contended = contended;
        this.namespace = namespace;
    }

    @Override
    public String scenario() {
        return contended ? "lock, contended (one name)" : "lock, uncontended (a name per thread)";
    }

    @Override
    public Server server() {
        return Server.REDIS;
    }

    @Override
    public String implementation() {
        return "redisson RLock";
    }

    @Override
    public void setUp(int threads) {
        Config config = new Config();
        config.useSingleServer().setAddress(redisUri);
        client = Redisson.create(config);
        locks = new RLock[threads];
        for (int i = 0; i < threads; i++) {
            locks[i] = client.getLock(namespace + (contended ? ":bench-hot" : ":bench-" + i));
        }
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contended ? shared : new CriticalSection();
        RLock lock = locks[index];
        return () -> {
            lock.lock();
            try {
                section.run();
            } finally {
                lock.unlock();
            }
        };
    }

    @Override
    public void close() {
        if (client != null) {
            client.shutdown();
        }
    }
}
