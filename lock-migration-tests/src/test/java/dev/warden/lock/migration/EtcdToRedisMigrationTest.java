package dev.warden.lock.migration;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockMigrationContractTest;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/**
 * The whole kit on the middle step of a switch from etcd back to Redis (a rollback of the common move,
 * or a move for speed): etcd's small revisions first, then Redis's clock-seeded tokens; the fault
 * clauses act on Redis, the backend moved to, while etcd stays up.
 */
@DisplayName("migrating from etcd to Redis")
class EtcdToRedisMigrationTest extends LockMigrationContractTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static EtcdServer etcd;

    @BeforeAll
    static void startEtcd() {
        etcd = EtcdServer.start();
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    private static RedisServer server() {
        return redis.server();
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected Map<String, Object> leftSettings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.endpoints());
    }

    @Override
    protected Map<String, Object> targetSettings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", server().uri());
    }

    @Override
    protected boolean hasLeftServerState(String namespace, String name) {
        return etcd.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected boolean hasTargetServerState(String namespace, String name) {
        return Long.valueOf(1).equals(server().command("EXISTS", "{" + namespace + ":" + name + "}:lock"));
    }

    @Override
    protected void removeOnLeftBackend(String namespace, String name) {
        etcd.deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    protected void removeOnTargetBackend(String namespace, String name) {
        server().command("DEL", "{" + namespace + ":" + name + "}:lock");
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
        return "redis://127.0.0.1:" + Ports.free();
    }

    @Override
    protected void pauseServer() {
        server().pause();
    }

    @Override
    protected void resumeServer() {
        if (server().isPaused()) {
            server().resume();
        }
    }
}
