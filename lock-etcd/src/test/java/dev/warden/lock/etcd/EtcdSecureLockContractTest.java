package dev.warden.lock.etcd;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.TlsMaterial;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The core and fault contracts (mutual exclusion, fencing, loss, outages; a holder's process killed
 * or frozen is EtcdLockContractTest's)
 * over TLS with a client certificate ({@code --client-cert-auth}) and as a user
 * whose only role may read and write the kit's namespaces ({@code tck-...}/) and nothing else,
 * all at once, against one etcd launched for this class.
 */
@DisplayName("etcd backend over mutual TLS, as a user limited to the namespace prefix")
class EtcdSecureLockContractTest extends LockFaultContractTest {

    static final String USER = "warden-tck";
    static final String PASSWORD = "tck-user-pw";

    private static TlsMaterial tls;
    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        tls = TlsMaterial.generate(tempDir());
        server = EtcdServer.builder().tls(tls).auth("root-pw").start();
        // The kit's namespaces are tck-<random>: the role covers them and nothing else.
        server.addUser(USER, PASSWORD, "tck-");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    static Path tempDir() {
        try {
            Path dir = Files.createTempDirectory("warden-etcd-tls");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Settings for an etcds:// client of {@code server} with mutual TLS from {@code material}, as {@code user}. */
    static Map<String, Object> secureSettings(EtcdServer server, TlsMaterial material, String user, String password) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "etcd");
        s.put("warden.lock.endpoints", server.endpoints());
        s.put("warden.lock.etcd.tls.trust-store", material.trustStore().toString());
        s.put("warden.lock.etcd.tls.trust-store-password", TlsMaterial.STORE_PASSWORD);
        s.put("warden.lock.etcd.tls.key-store", material.clientKeyStore().toString());
        s.put("warden.lock.etcd.tls.key-store-password", TlsMaterial.STORE_PASSWORD);
        s.put("warden.lock.etcd.username", user);
        s.put("warden.lock.etcd.password", password);
        return s;
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected Map<String, Object> settings() {
        return secureSettings(server, tls, USER, PASSWORD);
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return server.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server.host(), server.port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "etcds://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "etcds://127.0.0.1:" + s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
