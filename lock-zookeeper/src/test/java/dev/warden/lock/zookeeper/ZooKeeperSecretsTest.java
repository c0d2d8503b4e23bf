package dev.warden.lock.zookeeper;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.SecretsCheck;
import dev.warden.lock.spi.LockConfig;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A digest password, a store password or a secret in the endpoint reaches no exception message,
 * cause, {@code toString} or log line (issue 14).
 */
class ZooKeeperSecretsTest {

    static final String SECRET = "S3cretPw-zookeeper";

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    private static Map<String, Object> settings(String endpoints, String... more) {
        Map<String, Object> s = new HashMap<>(Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", endpoints,
                "warden.lock.connect-timeout", "1s", "warden.lock.request-timeout", "1s", "warden.lock.ttl", "10s"));
        for (int i = 0; i < more.length; i += 2) {
            s.put(more[i], more[i + 1]);
        }
        return s;
    }

    /** Creates a client that must fail; returns the exception after checking the secret is nowhere. */
    static LockException failure(Map<String, Object> settings) {
        return SecretsCheck.refusedWithout(settings, SECRET);
    }

    static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @ParameterizedTest
    @DisplayName("credentials in the endpoint are a configuration error naming it without them, in every form")
    @ValueSource(strings = {"zookeeper://root:" + SECRET + "@127.0.0.1:2181", "zookeeper://" + SECRET + "@127.0.0.1:2181",
            "zookeeper:root:" + SECRET + "@127.0.0.1:2181", "http://root:" + SECRET + "@127.0.0.1:2181",
            "zookeeper://root:" + SECRET + "@127.0.0.1:2181/path", "zookeeper://h:1?password=" + SECRET,
            "zookeeper://root:" + SECRET + "@bad host:1", "zookeeper://u:" + SECRET + "@h1:1,zookeeper://u:" + SECRET + "@h2:x"})
    void configurationError(String endpoint) {
        LockException e = failure(settings(endpoint));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("a configuration error beside a password setting, inline or for a store, does not echo the password")
    void passwordSettings() {
        LockException e = failure(settings("zookeeper://127.0.0.1:2181", "warden.lock.zookeeper.username", "u",
                "warden.lock.zookeeper.password", SECRET, "warden.lock.zookeeper.lost-on", "never"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("lost-on 'never'");

        e = failure(settings("zookeeper://127.0.0.1:2181", "warden.lock.zookeeper.password", SECRET));
        assertThat(e.getMessage()).contains("without warden.lock.zookeeper.username");

        e = failure(settings("zookeeper://127.0.0.1:2181", "warden.lock.zookeeper.tls.trust-store", "/no/such/store.p12",
                "warden.lock.zookeeper.tls.trust-store-password", SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("tls.trust-store '/no/such/store.p12' is not a readable file");
    }

    @Test
    @DisplayName("a connection failure of a digest user names the endpoint, not the password")
    void connectionFailure() throws IOException {
        int port = closedPort();
        LockException e = failure(settings("zookeeper://127.0.0.1:" + port, "warden.lock.zookeeper.username", "u",
                "warden.lock.zookeeper.password", SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("a connected digest user's client, its configuration and its log show no password")
    void toStrings() {
        Map<String, Object> s = settings(zookeeper.server().endpoint(), "warden.lock.zookeeper.username", "secrets-test",
                "warden.lock.zookeeper.password", SECRET, "warden.lock.namespace", "secrets");
        String output = CapturedOutput.of(() -> {
            try (LockClient c = LockClient.create(s)) {
                c.lock("secrets").acquire().release();
                assertThat(c.toString()).doesNotContain(SECRET).contains(zookeeper.server().connectString());
            }
        });
        assertThat(output).doesNotContain(SECRET);
        LockConfig config = new LockConfig("zookeeper", List.of(zookeeper.server().endpoint()), "ns", Duration.ofSeconds(30),
                Duration.ofSeconds(1), Duration.ofSeconds(1), Map.of("username", "u", "password", SECRET,
                "tls.key-store-password", SECRET, "lost-on", "lost"));
        assertThat(config.toString()).doesNotContain(SECRET).contains("lost-on=lost");
    }
}
