package dev.warden.lock.etcd;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockProcessFaultContractTest;
import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

/** The whole lock contract against one real etcd member launched for this class. */
@DisplayName("etcd backend, single member")
class EtcdLockContractTest extends LockProcessFaultContractTest {

    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void heal() {
        server.heal();
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", server.endpoints());
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server.host(), server.port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "etcd://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "etcd://127.0.0.1:" + s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return server.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        server.deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    protected void pauseServer() {
        server.pause();
    }

    @Override
    protected void resumeServer() {
        if (server.isPaused()) {
            server.resume();
        }
    }
}
