package dev.warden.lock.tck;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.testkit.CapturedOutput;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A password in the endpoint of a backend that takes no credentials reaches no exception message,
 * cause, {@code toString} or log line: credentials in its endpoint are a configuration error, and a
 * connection failure names the endpoint without them. A backend extends this and names itself.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class EndpointSecretsContractTest {

    /** The secret every case hides. */
    protected static final String SECRET = "S3cretPw-endpoint";

    /** The backend's name, which is also its endpoint scheme ({@code etcd}). */
    protected abstract String backend();

    private Map<String, Object> settings(String endpoints, String... more) {
        Map<String, Object> s = new HashMap<>(Map.of("warden.lock.backend", backend(), "warden.lock.endpoints", endpoints,
                "warden.lock.connect-timeout", "1s", "warden.lock.request-timeout", "1s", "warden.lock.ttl", "10s"));
        for (int i = 0; i < more.length; i += 2) {
            s.put(more[i], more[i + 1]);
        }
        return s;
    }

    private static LockException failure(Map<String, Object> settings) {
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

    List<String> endpointsWithSecrets() {
        String scheme = backend();
        return List.of(scheme + "://root:" + SECRET + "@127.0.0.1:2379", scheme + "://" + SECRET + "@127.0.0.1:2379",
                scheme + ":root:" + SECRET + "@127.0.0.1:2379", "http://root:" + SECRET + "@127.0.0.1:2379",
                scheme + "://root:" + SECRET + "@127.0.0.1:2379/path", scheme + "://h:1?password=" + SECRET,
                scheme + "://root:" + SECRET + "@bad host:1");
    }

    @ParameterizedTest
    @DisplayName("a configuration error names the endpoint without its password")
    @MethodSource("endpointsWithSecrets")
    void configurationError(String endpoint) {
        LockException e = failure(settings(endpoint));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("a secret in an unknown setting is not echoed")
    void unknownSecretSetting() {
        String setting = "warden.lock." + backend() + ".password";
        LockException e = failure(settings(backend() + "://127.0.0.1:2379", setting, SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains(setting);
    }

    @Test
    @DisplayName("a connection failure names the endpoint and leaves nothing secret in the log")
    void connectionFailure() throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        LockException e = failure(settings(backend() + "://127.0.0.1:" + port));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port);
    }
}
