package dev.warden.lock.redis;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.TlsMaterial;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static dev.warden.lock.redis.RedisTlsLockContractTest.freePort;
import static dev.warden.lock.redis.RedisTlsLockContractTest.tempDir;
import static dev.warden.lock.redis.RedisTlsLockContractTest.tlsServer;
import static dev.warden.lock.redis.RedisTlsLockContractTest.tlsSettings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** TLS failures are clear LockExceptions naming the endpoint, and nothing is held. */
class RedisTlsTest {

    static final TlsMaterial TLS = TlsMaterial.generate(tempDir());
    static final TlsMaterial OTHER_CA = TlsMaterial.generate(tempDir());
    static final int TLS_PORT = freePort();

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(tlsServer(TLS, TLS_PORT));

    static LockException failure(Map<String, Object> settings) {
        try (LockClient c = LockClient.create(settings)) {
            throw new AssertionError("connected: " + c);
        } catch (LockException e) {
            assertThat(redis.server().command("KEYS", "*:lock")).as("nothing held").asList().isEmpty();
            return e;
        }
    }

    @Test
    @DisplayName("the right CA and client certificate lock and release")
    void rightCa() {
        Map<String, Object> s = tlsSettings(TLS, TLS_PORT);
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        s.put("warden.lock.connect-timeout", "20s");
        try (LockClient c = LockClient.create(s)) {
            c.lock("x").acquire().release();
        }
    }

    @Test
    @DisplayName("a server certificate from another CA fails the handshake: UNAVAILABLE naming the endpoint and TLS")
    void wrongCa() {
        Map<String, Object> s = tlsSettings(TLS, TLS_PORT);
        s.put("warden.lock.redis.tls.trust-store", OTHER_CA.trustStore().toString());
        LockException e = failure(s);
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("rediss://127.0.0.1:" + TLS_PORT).contains("TLS handshake failed")
                .contains("tls.trust-store");
    }

    @Test
    @DisplayName("an expired server certificate from the trusted CA fails the handshake: UNAVAILABLE naming the endpoint and TLS")
    void expiredServerCertificate() {
        TlsMaterial expired = TlsMaterial.generateWithExpiredServer(tempDir());
        int port = freePort();
        try (RedisServer server = tlsServer(expired, port).start()) {
            Map<String, Object> s = tlsSettings(expired, port);
            LockException e;
            try (LockClient c = LockClient.create(s)) {
                throw new AssertionError("connected: " + c);
            } catch (LockException refused) {
                e = refused;
            }
            assertThat(server.command("KEYS", "*")).as("nothing held").asList().isEmpty();
            assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            assertThat(e.getMessage()).contains("rediss://127.0.0.1:" + port).contains("TLS handshake failed");
            assertThat(CapturedOutput.chain(e)).containsIgnoringCase("expired");
        }
    }

    @Test
    @DisplayName("no client certificate where the server requires one fails: UNAVAILABLE naming the endpoint")
    void noClientCertificate() {
        Map<String, Object> s = tlsSettings(TLS, TLS_PORT);
        s.remove("warden.lock.redis.tls.key-store");
        s.remove("warden.lock.redis.tls.key-store-password");
        LockException e = failure(s);
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("rediss://127.0.0.1:" + TLS_PORT).contains("TLS handshake failed");
    }

    @Test
    @DisplayName("a plaintext client on the TLS port fails within the connect timeout, naming the endpoint")
    void plaintextToTls() {
        LockException e = failure(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", "redis://127.0.0.1:" + TLS_PORT,
                "warden.lock.connect-timeout", "2s"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("redis://127.0.0.1:" + TLS_PORT).contains("is it rediss://?");
    }

    @Test
    @DisplayName("TLS settings on a redis:// endpoint are a configuration error")
    void tlsSettingsWithoutRediss() {
        Map<String, Object> s = tlsSettings(TLS, TLS_PORT);
        s.put("warden.lock.endpoints", redis.server().uri());
        assertThatThrownBy(() -> LockClient.create(s).close()).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION)).hasMessageContaining("rediss://");
    }
}
