package dev.warden.reactor;

import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** {@link ReactiveLock} on Warden's Redis backend, against a redis-server launched for this class: not memory-only. */
@DisplayName("ReactiveLock, Redis backend")
class RedisReactiveLockTest extends ReactiveLockClauses {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, Object> settings() {
        // A generous connect timeout: the tests share two cores with other builds.
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.connect-timeout", "30s");
    }
}
