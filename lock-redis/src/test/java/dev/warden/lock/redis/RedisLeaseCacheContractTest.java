package dev.warden.lock.redis;

import dev.warden.lock.tck.LockLeaseCacheContractTest;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/**
 * The core and fault contracts with lease caching on: every released lock is kept for the next acquisition
 * (for 300 ms, longer than most clauses wait between a release and the next acquisition), against a real
 * redis-server for this class.
 */
@DisplayName("Redis backend, leases kept (warden.lock.lease-cache)")
class RedisLeaseCacheContractTest extends LockLeaseCacheContractTest {

    /** Longer than most clauses take between a release and the next acquisition, short enough not to slow them. */
    private static final Duration KEPT_FOR = Duration.ofMillis(300);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static RedisServer server() {
        return redis.server();
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", server().uri(),
                "warden.lock.lease-cache", KEPT_FOR);
    }

    @Override
    protected Duration keptFor() {
        return KEPT_FOR;
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
