package dev.warden.quota;

import dev.warden.quota.redis.QuotaConfig;
import dev.warden.testkit.CapturedOutput;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** A password in the quota endpoint reaches no exception message, cause, toString or log line (issue 14). */
class QuotaSecretsTest {

    static final String SECRET = "S3cretPw-quota";

    static Map<String, Object> settings(String endpoint) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.quota.endpoint", endpoint);
        s.put("warden.quota.connect-timeout", "1s");
        s.put("warden.quota.request-timeout", "1s");
        return s;
    }

    static QuotaException failure(Map<String, Object> settings) {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        String output = CapturedOutput.of(() -> {
            try (QuotaService q = QuotaService.create(settings)) {
                throw new AssertionError("connected: " + q);
            } catch (QuotaException e) {
                thrown.set(e);
            }
        });
        assertThat(thrown.get()).isInstanceOf(QuotaException.class);
        assertThat(CapturedOutput.chain(thrown.get())).doesNotContain(SECRET);
        assertThat(output).doesNotContain(SECRET);
        return (QuotaException) thrown.get();
    }

    @ParameterizedTest
    @DisplayName("a configuration error names the endpoint without its password, in every form")
    @ValueSource(strings = {"redis://u:" + SECRET + "@127.0.0.1:notaport", "redis:u:" + SECRET + "@127.0.0.1:6379",
            "http://u:" + SECRET + "@127.0.0.1:6379", "redis://" + SECRET + "@127.0.0.1:99999",
            "redis-sentinel://u:" + SECRET + "@s1,s2", "redis-cluster://u:" + SECRET + "@h1,h2:x",
            "postgres://u:" + SECRET + "@db:5432/ledger"})
    void configurationError(String endpoint) {
        QuotaException e = failure(settings(endpoint));
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("a port that is not a number is a configuration error, not a host name")
    void notAPort() {
        QuotaException e = failure(settings("redis://u:" + SECRET + "@127.0.0.1:notaport"));
        assertThat(e.getMessage()).contains("redis://***@127.0.0.1:notaport");
    }

    @ParameterizedTest
    @DisplayName("a connection failure names the endpoint without its password")
    @ValueSource(strings = {"redis://u:%s@127.0.0.1:%d", "redis://%s@127.0.0.1:%d", "redis-cluster://u:%s@127.0.0.1:%d"})
    void connectionFailure(String form) throws IOException {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        QuotaException e = failure(settings(String.format(form, SECRET, port)));
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("127.0.0.1:" + port);
    }

    @Test
    @DisplayName("the settings' toString shows neither the endpoint's password nor a lock password")
    void configToString() {
        Map<String, Object> s = settings("redis://u:" + SECRET + "@127.0.0.1:6379");
        s.put("warden.quota.lock", "redis");
        s.put("warden.lock.redis.address-map", "a:1=b:2");
        QuotaConfig config = QuotaConfig.from(s);
        assertThat(config.toString()).doesNotContain(SECRET).contains("redis://***@127.0.0.1:6379");
    }
}
