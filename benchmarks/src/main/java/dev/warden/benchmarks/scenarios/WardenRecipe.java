package dev.warden.benchmarks.scenarios;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.Semaphore;

import java.util.Map;

/** A semaphore's permit, or a read-write lock's side, acquired and released through Warden's API on one name. */
public final class WardenRecipe extends RecipeWorkload {

    /** Which recipe, and the scenario every implementation of it shares. */
    public enum Recipe {
        SEMAPHORE("semaphore of 4, one name"),
        READ_WRITE("read-write, one name, 1 writer in 8 threads");

        final String scenario;

        Recipe(String scenario) {
            this.scenario = scenario;
        }
    }

    /** The semaphore's permits. */
    static final int PERMITS = 4;
    /** One thread in this many writes in the read-write scenario. */
    static final int WRITER_EVERY = 8;

    private final String implementation;
    private final Map<String, Object> settings;
    private LockClient client;

    public WardenRecipe(String implementation, Map<String, Object> settings, Recipe recipe) {
        super(recipe);
        this.implementation = implementation;
        this.settings = settings;
    }

    @Override
    public String implementation() {
        return implementation;
    }

    @Override
    public Server server() {
        return WardenLock.serverOf(settings);
    }

    @Override
    public void setUp(int threads) {
        client = LockClient.create(settings);
    }

    @Override
    public Operation operation(int index) {
        if (semaphore()) {
            Semaphore semaphore = client.semaphore("bench-permits", PERMITS);
            return () -> {
                try (Lease permit = semaphore.acquire()) {
                    section.hold();
                }
            };
        }
        boolean writer = SharedSection.writes(index, WRITER_EVERY);
        DistributedLock side = writer ? client.readWriteLock("bench-rw").writeLock() : client.readWriteLock("bench-rw").readLock();
        return () -> {
            try (Lease lease = side.acquire()) {
                section.enter(writer);
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
