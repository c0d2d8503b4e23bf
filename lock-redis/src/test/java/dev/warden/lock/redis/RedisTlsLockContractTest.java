package dev.warden.lock.redis;

import dev.warden.lock.tck.LockContractTest;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.TlsMaterial;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The core contract over mutual TLS: a redis-server with a TLS port that requires client certificates
 * (its default), a CA and certificates generated for this class, the client trusting only that CA.
 */
@DisplayName("Redis backend over mutual TLS")
class RedisTlsLockContractTest extends LockContractTest {

    static final TlsMaterial TLS = TlsMaterial.generate(tempDir());
    static final int TLS_PORT = freePort();

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(tlsServer(TLS, TLS_PORT));

    /** A server with its plain port (for testkit and assertions) and a TLS port that requires a client certificate. */
    static RedisServer.Builder tlsServer(TlsMaterial tls, int tlsPort) {
        return RedisServer.builder().config("tls-port", Integer.toString(tlsPort))
                .config("tls-cert-file", tls.serverCertificate().toString())
                .config("tls-key-file", tls.serverKey().toString())
                .config("tls-ca-cert-file", tls.caCertificate().toString());
    }

    /** Settings for a rediss:// client of that server, with mutual TLS. */
    static Map<String, Object> tlsSettings(TlsMaterial tls, int tlsPort) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "redis");
        s.put("warden.lock.endpoints", "rediss://127.0.0.1:" + tlsPort);
        s.put("warden.lock.redis.tls.trust-store", tls.trustStore().toString());
        s.put("warden.lock.redis.tls.trust-store-password", TlsMaterial.STORE_PASSWORD);
        s.put("warden.lock.redis.tls.key-store", tls.clientKeyStore().toString());
        s.put("warden.lock.redis.tls.key-store-password", TlsMaterial.STORE_PASSWORD);
        return s;
    }

    static Path tempDir() {
        try {
            Path dir = Files.createTempDirectory("warden-tls");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected Map<String, Object> settings() {
        return tlsSettings(TLS, TLS_PORT);
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return Long.valueOf(1).equals(redis.server().command("EXISTS", "{" + namespace + ":" + name + "}:lock"));
    }
}
