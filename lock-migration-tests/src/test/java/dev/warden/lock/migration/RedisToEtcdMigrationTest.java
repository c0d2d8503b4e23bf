package dev.warden.lock.migration;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockMigrationContractTest;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;

/**
 * The whole kit on the middle step of a switch from Redis to etcd, the move fund-critical services
 * make; the fault clauses act on etcd, the backend moved to, while Redis stays up.
 */
@DisplayName("migrating from Redis to etcd")
class RedisToEtcdMigrationTest extends LockMigrationContractTest {

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

    @BeforeEach
    void heal() {
        etcd.heal();
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
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", server().uri());
    }

    @Override
    protected Map<String, Object> targetSettings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.endpoints());
    }

    @Override
    protected boolean hasLeftServerState(String namespace, String name) {
        return Long.valueOf(1).equals(server().command("EXISTS", "{" + namespace + ":" + name + "}:lock"));
    }

    @Override
    protected boolean hasTargetServerState(String namespace, String name) {
        return etcd.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected void removeOnLeftBackend(String namespace, String name) {
        server().command("DEL", "{" + namespace + ":" + name + "}:lock");
    }

    @Override
    protected void removeOnTargetBackend(String namespace, String name) {
        etcd.deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(etcd.host(), etcd.port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "etcd://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return "etcd://127.0.0.1:" + Ports.free();
    }

    @Override
    protected void pauseServer() {
        etcd.pause();
    }

    @Override
    protected void resumeServer() {
        if (etcd.isPaused()) {
            etcd.resume();
        }
    }
}
