package dev.warden.lock.etcd;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.EtcdCluster;
import dev.warden.testkit.EtcdMember;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

/**
 * The core and fault contracts (a holder's process killed or frozen is EtcdLockContractTest's)
 * against a real 3-member etcd cluster: clients get every member; the
 * proxied client reaches one member only; "pausing the server" pauses every member.
 */
@DisplayName("etcd backend, 3-member cluster")
class EtcdClusterLockContractTest extends LockFaultContractTest {

    private static EtcdCluster cluster;

    @BeforeAll
    static void startCluster() {
        cluster = EtcdCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void heal() {
        cluster.heal();
    }

    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", cluster.endpoints());
    }

    private static EtcdMember proxied() {
        return cluster.member(0);
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(proxied().host(), proxied().port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "etcd://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        try (ServerSocket a = new ServerSocket(0); ServerSocket b = new ServerSocket(0)) {
            return "etcd://127.0.0.1:" + a.getLocalPort() + ",etcd://127.0.0.1:" + b.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return cluster.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        cluster.deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    protected void pauseServer() {
        cluster.pauseAll();
    }

    @Override
    protected void resumeServer() {
        if (cluster.isAnyPaused()) {
            cluster.resumeAll();
        }
    }
}
