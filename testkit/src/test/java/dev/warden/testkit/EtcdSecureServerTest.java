package dev.warden.testkit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** An etcd over mutual TLS with authentication on: testkit's own calls go as root; users are limited to their prefix. */
class EtcdSecureServerTest {

    private static EtcdServer server;

    @BeforeAll
    static void start() throws Exception {
        Path dir = Files.createTempDirectory("warden-etcd-tls");
        server = EtcdServer.builder().tls(TlsMaterial.generate(dir)).auth("root-pw").start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void inspectsAsRootAndLimitsUsersToTheirPrefix() {
        assertThat(server.endpoints()).startsWith("etcds://127.0.0.1:");
        assertThat(server.clientUrls().get(0)).startsWith("https://");
        server.put("p/a", "1");
        assertThat(server.keys("p/")).containsExactly("p/a");
        server.addUser("tenant-p", "tenant-pw", "p/");
        String token = server.authenticate("tenant-p", "tenant-pw");
        assertThat(server.requestAs(token, "/v3/kv/range", "{\"key\":\"" + b64("p/a") + "\"}")).contains(b64("p/a"));
        assertThatThrownBy(() -> server.requestAs(token, "/v3/kv/put", "{\"key\":\"" + b64("q/a") + "\",\"value\":\"" + b64("1") + "\"}"))
                .isInstanceOf(UncheckedIOException.class).hasMessageContaining("permission denied");
        assertThatThrownBy(() -> server.requestAs(null, "/v3/kv/range", "{\"key\":\"" + b64("p/a") + "\"}"))
                .isInstanceOf(UncheckedIOException.class);
        assertThat(server.deletePrefix("p/")).isEqualTo(1);
    }
}
