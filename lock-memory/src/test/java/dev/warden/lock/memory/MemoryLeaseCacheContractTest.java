package dev.warden.lock.memory;

import dev.warden.lock.memory.internal.MemoryDriver;
import dev.warden.lock.memory.internal.MemoryStore;
import dev.warden.lock.tck.LockCoreLeaseCacheContractTest;
import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.util.Map;

/**
 * The core contract with lease caching on: every released lock is kept for the next acquisition (for 300 ms,
 * longer than most clauses wait between a release and the next acquisition), in a store of its own.
 */
@DisplayName("memory backend, leases kept (warden.lock.lease-cache)")
class MemoryLeaseCacheContractTest extends LockCoreLeaseCacheContractTest {

    private static final String STORE = "lease-cache-contract";

    /** Longer than most clauses take between a release and the next acquisition, short enough not to slow them. */
    private static final Duration KEPT_FOR = Duration.ofMillis(300);

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "memory", "warden.lock.endpoints", "memory://" + STORE,
                "warden.lock.lease-cache", KEPT_FOR);
    }

    @Override
    protected Duration keptFor() {
        return KEPT_FOR;
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return MemoryStore.named(STORE).hasState(MemoryDriver.key(namespace, name));
    }
}
