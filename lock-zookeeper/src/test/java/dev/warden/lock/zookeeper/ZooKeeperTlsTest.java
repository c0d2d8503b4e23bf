package dev.warden.lock.zookeeper;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.TlsMaterial;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * TLS that must fail, against one server launched for this class whose secure client port requires a
 * client certificate: a server certificate from another CA, an expired server certificate (a second
 * server, for that test alone), a plaintext client on the secure port, and no client certificate. Each
 * is a {@code LockException} naming the endpoint within the connect timeout, with nothing held and no
 * store password in the exception or the log. A client with the right stores connects, as a control.
 */
@DisplayName("ZooKeeper over TLS: refused handshakes")
class ZooKeeperTlsTest {

    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);
    /** Scheduling noise on a loaded machine, on top of the connect timeout. */
    static final Duration SLACK = Duration.ofSeconds(3);

    static final TlsMaterial TLS = ZooKeeperSecureLockContractTest.generateTls();

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().secureClientPort(TLS, true));

    @TempDir
    static Path dir;
    static TlsMaterial otherCa;
    static ZooKeeperInspector inspector;

    @BeforeAll
    static void setUp() {
        otherCa = TlsMaterial.generate(dir.resolve("other-ca"));
        inspector = new ZooKeeperInspector(zookeeper.server().connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    static Map<String, Object> plain(String endpoint, String namespace) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", endpoint);
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", "2s");
        s.put("warden.lock.connect-timeout", CONNECT_TIMEOUT);
        return s;
    }

    static Map<String, Object> secure(String endpoint, String namespace, Path trustStore, Path keyStore) {
        Map<String, Object> s = plain(endpoint, namespace);
        s.put("warden.lock.zookeeper.tls.trust-store", trustStore.toString());
        s.put("warden.lock.zookeeper.tls.trust-store-password", TlsMaterial.STORE_PASSWORD);
        if (keyStore != null) {
            s.put("warden.lock.zookeeper.tls.key-store", keyStore.toString());
            s.put("warden.lock.zookeeper.tls.key-store-password", TlsMaterial.STORE_PASSWORD);
        }
        return s;
    }

    /**
     * Opens a client on {@code settings}, which must fail: UNAVAILABLE naming {@code endpoint}, within the
     * connect timeout, no store password in the exception chain or anything logged meanwhile.
     */
    static LockException refused(Map<String, Object> settings, String endpoint) {
        AtomicReference<LockException> error = new AtomicReference<>();
        long t0 = System.nanoTime();
        String logged = CapturedOutput.of(() -> error.set(assertThrows(LockException.class, () -> LockClient.create(settings).close())));
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        LockException e = error.get();
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains(endpoint.substring("zookeeper://".length()));
        assertThat(took).as("given up within the connect timeout").isLessThan(CONNECT_TIMEOUT.plus(SLACK));
        assertThat(CapturedOutput.chain(e) + logged).doesNotContain(TlsMaterial.STORE_PASSWORD);
        return e;
    }

    /** Nothing of {@code namespace} on the server, and a good client gets {@code name} at once. */
    static void nothingHeld(String namespace, String name) throws Exception {
        assertThat(inspector.curator().checkExists().forPath("/" + namespace)).as("nothing created").isNull();
        try (LockClient good = LockClient.create(secure(zookeeper.server().secureEndpoint(), namespace, TLS.trustStore(),
                TLS.clientKeyStore()))) {
            Optional<Lease> lease = good.lock(name).tryAcquire(Duration.ZERO);
            assertThat(lease).as("free").isPresent();
            lease.get().release();
        }
    }

    @Test
    @DisplayName("control: the right CA and a client certificate connect and lock, no store password in the log")
    void rightStoresConnect() {
        String logged = CapturedOutput.of(() -> {
            try (LockClient c = LockClient.create(secure(zookeeper.server().secureEndpoint(), "tls-ok", TLS.trustStore(),
                    TLS.clientKeyStore()))) {
                c.lock("a").acquire().release();
                assertThat(c.toString()).doesNotContain(TlsMaterial.STORE_PASSWORD);
            }
        });
        assertThat(logged).doesNotContain(TlsMaterial.STORE_PASSWORD);
    }

    @Test
    @DisplayName("a server certificate from another CA: UNAVAILABLE naming the endpoint, within the connect timeout, nothing held")
    void serverFromAnotherCa() throws Exception {
        String endpoint = zookeeper.server().secureEndpoint();
        LockException e = refused(secure(endpoint, "tls-other-ca", otherCa.trustStore(), TLS.clientKeyStore()), endpoint);
        assertThat(e.getMessage()).contains("TLS").contains("trust-store");
        nothingHeld("tls-other-ca", "a");
    }

    @Test
    @DisplayName("an expired server certificate (its CA trusted): UNAVAILABLE naming the endpoint, within the connect timeout")
    void expiredServerCertificate() {
        TlsMaterial expired = TlsMaterial.generateWithExpiredServer(dir.resolve("expired"));
        try (ZooKeeperServer server = ZooKeeperServer.builder().secureClientPort(expired, true).start()) {
            String endpoint = server.secureEndpoint();
            LockException e = refused(secure(endpoint, "tls-expired", expired.trustStore(), expired.clientKeyStore()), endpoint);
            assertThat(e.getMessage()).contains("TLS");
        }
    }

    @Test
    @DisplayName("a plaintext client on the secure port: UNAVAILABLE naming the endpoint, within the connect timeout, nothing held")
    void plaintextClientOnSecurePort() throws Exception {
        String endpoint = zookeeper.server().secureEndpoint();
        LockException e = refused(plain(endpoint, "tls-plaintext"), endpoint);
        assertThat(e.getMessage()).contains("secureClientPort");
        nothingHeld("tls-plaintext", "a");
    }

    @Test
    @DisplayName("no client certificate where the server requires one: UNAVAILABLE naming the endpoint, nothing held")
    void noClientCertificate() throws Exception {
        String endpoint = zookeeper.server().secureEndpoint();
        LockException e = refused(secure(endpoint, "tls-no-client-cert", TLS.trustStore(), null), endpoint);
        assertThat(e.getMessage()).contains("key-store");
        nothingHeld("tls-no-client-cert", "a");
    }
}
