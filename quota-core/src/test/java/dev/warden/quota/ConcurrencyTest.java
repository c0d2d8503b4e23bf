package dev.warden.quota;

import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The concurrency contract against one server. */
@DisplayName("quota concurrency on one server")
class ConcurrencyTest extends ConcurrencyContractTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Override
    protected String endpoint() {
        return redis.server().uri();
    }

    @Override
    protected RedisServer nodeOf(String key) {
        return redis.server();
    }
}
