package dev.warden.shedlock;

import org.junit.jupiter.api.DisplayName;

import java.util.Map;

/** ShedLock's extensible provider kit on Warden's in-memory backend (one JVM, no server). */
@DisplayName("ShedLock kit, memory backend")
class MemoryShedLockTest extends WardenShedLockKit {

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "memory", "warden.lock.endpoints", "memory://" + namespace());
    }
}
