package dev.warden.benchmarks.scenarios;

import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

/**
 * Baseline: Redisson's {@code RPermitExpirableSemaphore} (permits that expire with a lease, as Warden's do;
 * {@code RSemaphore}'s never come back from a dead holder) and {@code RReadWriteLock}, on the same server.
 */
public final class RedissonRecipe extends RecipeWorkload {

    private final String redisUri;
    private final String namespace;
    private RedissonClient client;

    public RedissonRecipe(String redisUri, WardenRecipe.Recipe recipe, String namespace) {
        super(recipe);
        this.redisUri = redisUri;
        this.namespace = namespace;
    }

    @Override
    public String implementation() {
        return semaphore() ? "redisson RPermitExpirableSemaphore" : "redisson RReadWriteLock";
    }

    @Override
    public Server server() {
        return Server.REDIS;
    }

    @Override
    public void setUp(int threads) {
        Config config = new Config();
        config.useSingleServer().setAddress(redisUri);
        client = Redisson.create(config);
        if (semaphore()) {
            RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore(namespace + ":bench-permits");
            semaphore.delete();
            semaphore.trySetPermits(WardenRecipe.PERMITS);
        }
    }

    @Override
    public Operation operation(int index) {
        if (semaphore()) {
            RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore(namespace + ":bench-permits");
            return () -> {
                // A lease time, like Warden's TTL: a dead holder's permit comes back.
                String permit = semaphore.acquire(30, TimeUnit.SECONDS);
                try {
                    section.hold();
                } finally {
                    semaphore.release(permit);
                }
            };
        }
        RReadWriteLock rw = client.getReadWriteLock(namespace + ":bench-rw");
        boolean writer = SharedSection.writes(index, WardenRecipe.WRITER_EVERY);
        Lock side = writer ? rw.writeLock() : rw.readLock();
        return () -> {
            side.lock();
            try {
                section.enter(writer);
            } finally {
                side.unlock();
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
