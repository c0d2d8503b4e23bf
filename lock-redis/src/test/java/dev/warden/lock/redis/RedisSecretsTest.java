package dev.warden.lock.redis;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.SecretsCheck;
import dev.warden.lock.spi.LockConfig;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A password in the endpoint reaches no exception message, cause, toString or log line (issue 14). */
class RedisSecretsTest {

    static final String SECRET = "S3cretPw-redis";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static Map<String, Object> settings(String endpoints) {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", endpoints,
                "warden.lock.connect-timeout", "1s", "warden.lock.request-timeout", "1s");
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
    @DisplayName("a configuration error names the endpoint without its password, in every form")
    @ValueSource(strings = {"redis://user:" + SECRET + "@127.0.0.1:notaport", "redis:user:" + SECRET + "@127.0.0.1:6379",
            "redis://" + SECRET + "@127.0.0.1:99999", "http://user:" + SECRET + "@127.0.0.1:6379",
            "redis-sentinel://user:" + SECRET + "@s1:26379,s2:26379", "redis-cluster://u:" + SECRET + "@h1,u:" + SECRET + "@h2:x",
            "redis://a:" + SECRET + "@h1:1,redis://a:" + SECRET + "@h2:2"})
    void configurationError(String endpoint) {
        LockException e = failure(settings(endpoint));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("a port that is not a number is a configuration error naming the endpoint, not a host name")
    void notAPort() {
        LockException e = failure(settings("redis://u:" + SECRET + "@127.0.0.1:notaport"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("redis://***@127.0.0.1:notaport").contains("not host[:port]");
    }

    @ParameterizedTest
    @DisplayName("a connection failure names the endpoint without its password")
    @ValueSource(strings = {"redis://user:%s@127.0.0.1:%d", "redis://%s@127.0.0.1:%d", "rediss://user:%s@127.0.0.1:%d",
            "redis-cluster://user:%s@127.0.0.1:%d"})
    void connectionFailure(String form) throws IOException {
        int port = closedPort();
        LockException e = failure(settings(String.format(form, SECRET, port)));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("a connected client, its configuration and its log show no password")
    void toStrings() {
        redis.server().command("ACL", "SETUSER", "secrets-test", "on", ">" + SECRET, "~*", "&*", "+@all");
        String endpoint = "redis://secrets-test:" + SECRET + "@" + redis.server().host() + ":" + redis.server().port();
        String output = CapturedOutput.of(() -> {
            // The first connection of this JVM: a timeout sized for a cold start, not the failures' 1 s.
            Map<String, Object> settings = new java.util.HashMap<>(settings(endpoint));
            settings.put("warden.lock.connect-timeout", "20s");
            try (LockClient c = LockClient.create(settings)) {
                c.lock("secrets").acquire().release();
                assertThat(c.toString()).doesNotContain(SECRET).contains(redis.server().host());
            }
        });
        assertThat(output).doesNotContain(SECRET);
        LockConfig config = new LockConfig("redis", List.of(endpoint), "ns", Duration.ofSeconds(30), Duration.ofSeconds(1),
                Duration.ofSeconds(1), Map.of("password", SECRET, "address-map", "a:1=b:2"));
        assertThat(config.toString()).doesNotContain(SECRET).contains("address-map=a:1=b:2");
    }
}
