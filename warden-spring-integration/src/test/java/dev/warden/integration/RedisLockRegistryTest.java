package dev.warden.integration;

import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** The registry's contract on Warden's Redis backend, against a redis-server launched for this class. */
@DisplayName("Spring Integration lock registry, Redis backend")
class RedisLockRegistryTest extends WardenLockRegistryKit {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri());
    }

    @Override
    protected void pauseServer() {
        redis.server().pause();
    }

    @Override
    protected void resumeServer() {
        redis.server().resume();
    }
}
