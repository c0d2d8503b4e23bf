package dev.warden.lock.zookeeper;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.testkit.CapturedOutput;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A password in the endpoint reaches no exception message, cause, toString or log line (issue 14).
 * The zookeeper backend has no authentication yet, so credentials in an endpoint are a configuration error;
 * the connection failure is checked with a secret in a setting the backend refuses.
 */
class ZooKeeperSecretsTest {

    static final String SECRET = "S3cretPw-zookeeper";

    private static Map<String, Object> settings(String endpoints, String... more) {
        Map<String, Object> s = new java.util.HashMap<>(Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", endpoints,
                "warden.lock.connect-timeout", "1s", "warden.lock.request-timeout", "1s", "warden.lock.ttl", "10s"));
        for (int i = 0; i < more.length; i += 2) {
            s.put(more[i], more[i + 1]);
        }
        return s;
    }

    static LockException failure(Map<String, Object> settings) {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        String output = CapturedOutput.of(() -> {
            try (LockClient c = LockClient.create(settings)) {
                throw new AssertionError("connected: " + c);
            } catch (LockException e) {
                thrown.set(e);
            }
        });
        assertThat(thrown.get()).isInstanceOf(LockException.class);
        assertThat(CapturedOutput.chain(thrown.get())).doesNotContain(SECRET);
        assertThat(output).doesNotContain(SECRET);
        return (LockException) thrown.get();
    }

    @ParameterizedTest
    @DisplayName("a configuration error names the endpoint without its password")
    @ValueSource(strings = {"zookeeper://root:" + SECRET + "@127.0.0.1:2379", "zookeeper://" + SECRET + "@127.0.0.1:2379",
            "zookeeper:root:" + SECRET + "@127.0.0.1:2379", "http://root:" + SECRET + "@127.0.0.1:2379",
            "zookeeper://root:" + SECRET + "@127.0.0.1:2379/path", "zookeeper://h:1?password=" + SECRET,
            "zookeeper://root:" + SECRET + "@bad host:1"})
    void configurationError(String endpoint) {
        LockException e = failure(settings(endpoint));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("a secret in an unknown setting is not echoed")
    void unknownSecretSetting() {
        LockException e = failure(settings("zookeeper://127.0.0.1:2379", "warden.lock.zookeeper.password", SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("warden.lock.zookeeper.password");
    }

    @Test
    @DisplayName("a connection failure names the endpoint and leaves nothing secret in the log")
    void connectionFailure() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        LockException e = failure(settings("zookeeper://127.0.0.1:" + port));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port);
    }
}
