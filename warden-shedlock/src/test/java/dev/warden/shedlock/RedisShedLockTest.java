package dev.warden.shedlock;

import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** ShedLock's extensible provider kit on Warden's Redis backend, against a redis-server launched for this class. */
@DisplayName("ShedLock kit, Redis backend")
class RedisShedLockTest extends WardenShedLockKit {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri());
    }
}
