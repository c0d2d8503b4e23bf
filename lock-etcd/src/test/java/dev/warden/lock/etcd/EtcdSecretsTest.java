package dev.warden.lock.etcd;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.SecretsCheck;
import dev.warden.lock.spi.LockConfig;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An etcd password, in the settings or in an endpoint, reaches no exception message, cause,
 * {@code toString} or log line (issue 14), against one etcd with authentication on.
 */
class EtcdSecretsTest {

    static final String SECRET = "S3cretPw-etcd";
    static final String USER = "secrets-test";
    /** Generous timeouts for the cases that talk to the server: on a loaded machine a login (bcrypt) can take a while. */
    static final String[] PATIENT = {"warden.lock.connect-timeout", "15s", "warden.lock.request-timeout", "3s"};

    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        server = EtcdServer.builder().auth("root-pw").start();
        server.addUser(USER, SECRET, "secrets/");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static Map<String, Object> settings(String endpoints, String... more) {
        Map<String, Object> s = new HashMap<>(Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", endpoints,
                "warden.lock.namespace", "secrets", "warden.lock.ttl", "10s",
                "warden.lock.connect-timeout", "1s", "warden.lock.request-timeout", "1s"));
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
    @DisplayName("a secret in an endpoint is a configuration error naming the endpoint without it, in every form")
    @ValueSource(strings = {"etcd://root:" + SECRET + "@127.0.0.1:2379", "etcd://" + SECRET + "@127.0.0.1:2379",
            "etcds://root:" + SECRET + "@127.0.0.1:2379", "etcd:root:" + SECRET + "@127.0.0.1:2379",
            "http://root:" + SECRET + "@127.0.0.1:2379", "etcd://root:" + SECRET + "@127.0.0.1:2379/path",
            "etcd://h:1?password=" + SECRET, "etcd://root:" + SECRET + "@bad host:1",
            "etcd://a:" + SECRET + "@h1:1,etcds://a:" + SECRET + "@h2:2"})
    void endpointSecret(String endpoint) {
        LockException e = failure(settings(endpoint));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("credentials in the endpoint point to the username and password settings")
    void endpointCredentials() {
        LockException e = failure(settings("etcd://root:" + SECRET + "@127.0.0.1:2379"));
        assertThat(e.getMessage()).contains("etcd://***@127.0.0.1:2379").contains("warden.lock.etcd.username");
    }

    @Test
    @DisplayName("password settings that do not fit are configuration errors that never echo the secret")
    void passwordSettings() throws IOException {
        Path file = Files.createTempFile("etcd-secret", ".txt");
        try {
            Files.writeString(file, SECRET);
            assertThat(failure(settings("etcd://127.0.0.1:2379", "warden.lock.etcd.password", SECRET)).getMessage())
                    .contains("warden.lock.etcd.username");
            assertThat(failure(settings("etcd://127.0.0.1:2379", "warden.lock.etcd.username", USER,
                    "warden.lock.etcd.password", SECRET, "warden.lock.etcd.password-file", file.toString())).reason())
                    .isEqualTo(LockException.Reason.CONFIGURATION);
            assertThat(failure(settings("etcd://127.0.0.1:2379", "warden.lock.etcd.username", USER,
                    "warden.lock.etcd.password-env", "WARDEN_NO_SUCH_VARIABLE_" + SECRET.length())).reason())
                    .isEqualTo(LockException.Reason.CONFIGURATION);
            assertThat(failure(settings("etcd://127.0.0.1:2379", "warden.lock.etcd.tls.trust-store", file.toString(),
                    "warden.lock.etcd.tls.trust-store-password", SECRET)).getMessage()).contains("etcds://");
            assertThat(failure(settings("etcd://127.0.0.1:2379", "warden.lock.etcd.secret", SECRET)).reason())
                    .isEqualTo(LockException.Reason.CONFIGURATION);
        } finally {
            Files.deleteIfExists(file);
        }
    }

    @ParameterizedTest
    @DisplayName("a connection failure names the endpoint and not the password")
    @ValueSource(strings = {"etcd", "etcds"})
    void connectionFailure(String scheme) throws IOException {
        int port = closedPort();
        LockException e = failure(settings(scheme + "://127.0.0.1:" + port, "warden.lock.etcd.username", USER,
                "warden.lock.etcd.password", SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("a wrong password is ACCESS_DENIED naming the endpoint and the user, not the password")
    void wrongPassword() {
        LockException e = failure(settings(server.endpoints(), "warden.lock.etcd.username", "root",
                "warden.lock.etcd.password", SECRET, PATIENT[0], PATIENT[1], PATIENT[2], PATIENT[3]));
        assertThat(e.reason()).as(e.getMessage()).isEqualTo(LockException.Reason.ACCESS_DENIED);
        assertThat(e.getMessage()).contains(server.endpoints()).contains("'root'");
    }

    @Test
    @DisplayName("a connected client, its configuration and its log show no password, given inline or in a file")
    void toStrings() throws IOException {
        Path file = Files.createTempFile("etcd-secret", ".txt");
        try {
            Files.writeString(file, SECRET + "\n");
            for (Map<String, Object> s : List.of(
                    settings(server.endpoints(), "warden.lock.etcd.username", USER, "warden.lock.etcd.password", SECRET,
                            PATIENT[0], PATIENT[1], PATIENT[2], PATIENT[3]),
                    settings(server.endpoints(), "warden.lock.etcd.username", USER, "warden.lock.etcd.password-file", file.toString(),
                            PATIENT[0], PATIENT[1], PATIENT[2], PATIENT[3]))) {
                String output = CapturedOutput.of(() -> {
                    try (LockClient c = LockClient.create(s)) {
                        c.lock("secrets").acquire().release();
                        assertThat(c.toString()).doesNotContain(SECRET).contains("127.0.0.1");
                    }
                });
                assertThat(output).doesNotContain(SECRET);
            }
        } finally {
            Files.deleteIfExists(file);
        }
        LockConfig config = new LockConfig("etcd", List.of(server.endpoints()), "ns", Duration.ofSeconds(30), Duration.ofSeconds(1),
                Duration.ofSeconds(1), Map.of("username", USER, "password", SECRET, "tls.key-store-password", SECRET));
        assertThat(config.toString()).doesNotContain(SECRET).contains("username=" + USER);
    }
}
