package dev.warden.benchmarks.scenarios;

import dev.warden.benchmarks.Workload;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

import java.util.concurrent.TimeUnit;

/** Baseline: Curator's {@code InterProcessMutex} acquire + release on the same ZooKeeper. */
public final class CuratorMutex implements Workload {

    private final CriticalSection shared = new CriticalSection();

    private final String connectString;
    private final boolean contended;
    private final String namespace;
    private CuratorFramework client;
    private InterProcessMutex[] mutexes;

    public CuratorMutex(String connectString, boolean contended, String namespace) {
        this.connectString = connectString;
        this.contended = contended;
        this.namespace = namespace;
    }

    @Override
    public String scenario() {
        return contended ? "lock, contended (one name)" : "lock, uncontended (a name per thread)";
    }

    @Override
    public Server server() {
        return Server.ZOOKEEPER;
    }

    @Override
    public String implementation() {
        return "curator InterProcessMutex";
    }

    @Override
    public void setUp(int threads) throws InterruptedException {
        client = CuratorMutex.connect(connectString);
        mutexes = new InterProcessMutex[threads];
        InterProcessMutex shared = new InterProcessMutex(client, "/" + namespace + "/bench-hot");
        for (int i = 0; i < threads; i++) {
            mutexes[i] = contended ? shared : new InterProcessMutex(client, "/" + namespace + "/bench-" + i);
        }
    }

    /** A started Curator client on {@code connectString}, connected, as every Curator baseline uses it. */
    static CuratorFramework connect(String connectString) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(connectString).sessionTimeoutMs(10_000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        client.start();
        if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("Curator could not connect to " + connectString);
        }
        return client;
    }

    @Override
    public Operation operation(int index) {
        // One name for all threads when contended; a name, so a critical section, per thread otherwise.
        CriticalSection section = contended ? shared : new CriticalSection();
        InterProcessMutex mutex = mutexes[index];
        return () -> {
            mutex.acquire();
            try {
                section.run();
            } finally {
                mutex.release();
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
