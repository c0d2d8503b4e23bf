package dev.warden.benchmarks.scenarios;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;


/** Baseline: Curator's {@code InterProcessSemaphoreV2} and {@code InterProcessReadWriteLock} on the same ZooKeeper. */
public final class CuratorRecipe extends RecipeWorkload {

    private final String connectString;
    private final String namespace;
    private CuratorFramework client;
    private InterProcessReadWriteLock rw;

    public CuratorRecipe(String connectString, WardenRecipe.Recipe recipe, String namespace) {
        super(recipe);
        this.connectString = connectString;
        this.namespace = namespace;
    }

    @Override
    public Server server() {
        return Server.ZOOKEEPER;
    }

    @Override
    public String implementation() {
        return semaphore() ? "curator InterProcessSemaphoreV2" : "curator InterProcessReadWriteLock";
    }

    @Override
    public void setUp(int threads) throws InterruptedException {
        client = CuratorMutex.connect(connectString);
        rw = new InterProcessReadWriteLock(client, "/" + namespace + "/bench-rw");
    }

    @Override
    public Operation operation(int index) {
        if (semaphore()) {
            // One object per thread, as separate processes would have; the path and the count are shared.
            InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, "/" + namespace + "/bench-permits",
                    WardenRecipe.PERMITS);
            return () -> {
                Lease lease = semaphore.acquire();
                try {
                    section.hold();
                } finally {
                    semaphore.returnLease(lease);
                }
            };
        }
        boolean writer = SharedSection.writes(index, WardenRecipe.WRITER_EVERY);
        // Curator's read-write lock is reentrant per thread through one object, as Warden's is per client.
        InterProcessMutex side = writer ? rw.writeLock() : rw.readLock();
        return () -> {
            side.acquire();
            try {
                section.enter(writer);
            } finally {
                side.release();
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
