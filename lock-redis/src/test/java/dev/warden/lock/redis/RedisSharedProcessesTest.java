package dev.warden.lock.redis;

import dev.warden.lock.tck.SharedRecipeProcessesTest;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

@DisplayName("Redis: semaphores and read-write locks across processes")
class RedisSharedProcessesTest extends SharedRecipeProcessesTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri());
    }
}
