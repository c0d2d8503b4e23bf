package dev.warden.lock.redis;

import dev.warden.lock.tck.LockProcessFaultContractTest;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.util.Map;

/** The core and fault contracts against a real redis-server launched for this class. */
@DisplayName("Redis backend")
class RedisLockContractTest extends LockProcessFaultContractTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisServer server() {
        return redis.server();
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", server().uri());
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server().host(), server().port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "redis://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return OneRedisServer.unreachableEndpoints();
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return OneRedisServer.hasLock(server(), namespace, name);
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        OneRedisServer.deleteLock(server(), namespace, name);
    }

    @Override
    protected void pauseServer() {
        server().pause();
    }

    @Override
    protected void resumeServer() {
        OneRedisServer.resume(server());
    }
}
