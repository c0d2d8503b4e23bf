package dev.warden.integration;

import org.junit.jupiter.api.DisplayName;

import java.util.Map;
import java.util.UUID;

/** The registry's contract on Warden's in-memory backend (one JVM, no server: the pause test is skipped). */
@DisplayName("Spring Integration lock registry, memory backend")
class MemoryLockRegistryTest extends WardenLockRegistryKit {

    private static final String STORE = "spring-integration-" + UUID.randomUUID();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "memory", "warden.lock.endpoints", "memory://" + STORE);
    }
}
