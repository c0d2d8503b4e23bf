package dev.warden.lock.memory;

import dev.warden.lock.memory.internal.MemoryDriver;
import dev.warden.lock.memory.internal.MemoryStore;
import dev.warden.lock.tck.LockContractTest;
import org.junit.jupiter.api.DisplayName;

import java.util.Map;

/**
 * The whole core contract in memory, no server: the same clauses every server backend passes. The
 * fault contract needs a server to pause, cut off or kill, which this backend does not have.
 */
@DisplayName("memory backend")
class MemoryLockContractTest extends LockContractTest {

    private static final String STORE = "contract";

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "memory", "warden.lock.endpoints", "memory://" + STORE);
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return MemoryStore.named(STORE).hasState(MemoryDriver.key(namespace, name));
    }
}
