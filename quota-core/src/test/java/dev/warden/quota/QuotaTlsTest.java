package dev.warden.quota;

import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.TlsMaterial;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The quota engine over mutual TLS, and a clear failure with the wrong CA. */
class QuotaTlsTest {

    static final TlsMaterial TLS = TlsMaterial.generate(tempDir());
    static final TlsMaterial OTHER_CA = TlsMaterial.generate(tempDir());
    static final int TLS_PORT = freePort();

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(RedisServer.builder()
            .config("tls-port", Integer.toString(TLS_PORT))
            .config("tls-cert-file", TLS.serverCertificate().toString())
            .config("tls-key-file", TLS.serverKey().toString())
            .config("tls-ca-cert-file", TLS.caCertificate().toString()));

    static Path tempDir() {
        try {
            return Files.createTempDirectory("warden-quota-tls");
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

    static Map<String, Object> settings(TlsMaterial trusted) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.quota.endpoint", "rediss://127.0.0.1:" + TLS_PORT);
        s.put("warden.quota.connect-timeout", "10s");
        s.put("warden.quota.redis.tls.trust-store", trusted.trustStore().toString());
        s.put("warden.quota.redis.tls.trust-store-password", TlsMaterial.STORE_PASSWORD);
        s.put("warden.quota.redis.tls.key-store", TLS.clientKeyStore().toString());
        s.put("warden.quota.redis.tls.key-store-password", TlsMaterial.STORE_PASSWORD);
        return s;
    }

    @Test
    @DisplayName("over mutual TLS the engine opens, deducts and reads; a Redis lock on the same endpoint inherits the TLS settings")
    void mutualTls() {
        Map<String, Object> s = settings(TLS);
        s.put("warden.quota.lock", "redis");
        s.put("warden.lock.connect-timeout", ConnectTimeouts.CONNECT_TIMEOUT);
        try (QuotaService q = QuotaService.create(s)) {
            q.open("tls-1", 100);
            assertThat(q.deduct("tls-1", 40, "r1")).isInstanceOf(Outcome.Applied.class);
            assertThat(q.balance("tls-1")).hasValue(60);
            assertThat(q.toString()).doesNotContain(TlsMaterial.STORE_PASSWORD);
        }
    }

    @Test
    @DisplayName("a server certificate from another CA is UNAVAILABLE naming the endpoint")
    void wrongCa() {
        assertThatThrownBy(() -> QuotaService.create(settings(OTHER_CA)).close())
                .isInstanceOfSatisfying(QuotaException.class, e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.UNAVAILABLE))
                .hasMessageContaining("rediss://127.0.0.1:" + TLS_PORT).hasMessageContaining("TLS handshake failed");
    }

    @Test
    @DisplayName("TLS settings on a redis:// endpoint are a configuration error")
    void tlsWithoutRediss() {
        Map<String, Object> s = settings(TLS);
        s.put("warden.quota.endpoint", redis.server().uri());
        assertThatThrownBy(() -> QuotaService.create(s).close())
                .isInstanceOfSatisfying(QuotaException.class, e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION))
                .hasMessageContaining("rediss://");
    }
}
