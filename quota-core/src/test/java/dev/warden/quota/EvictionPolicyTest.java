package dev.warden.quota;

import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A server whose maxmemory-policy can evict quota keys is refused at start-up, naming the setting;
 * explicitly allowed, it starts with a warning.
 */
class EvictionPolicyTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @AfterEach
    void reset() {
        redis.server().command("CONFIG", "SET", "maxmemory-policy", "noeviction");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
            "volatile-random", "volatile-ttl"})
    @DisplayName("an evicting policy is refused at start-up with CONFIGURATION naming the setting; allowed explicitly, a warning")
    void refusedUnlessAllowed(String policy) {
        redis.server().command("CONFIG", "SET", "maxmemory-policy", policy);
        QuotaException refused = catchThrowableOfType(QuotaException.class,
                () -> QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri()))));
        assertThat(refused.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
        assertThat(refused.getMessage()).contains("maxmemory-policy " + policy, "noeviction",
                "warden.quota.allow-eviction=true");

        PrintStream original = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try (QuotaService quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.allow-eviction", "true")))) {
            assertThat(quota.open("evict-" + policy + "-" + System.nanoTime(), 10).isApplied()).isTrue();
        } finally {
            System.setErr(original);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8)).contains("WARN").contains("maxmemory-policy " + policy);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"noeviction"})
    @DisplayName("noeviction starts without a word")
    void noEvictionStarts(String policy) {
        redis.server().command("CONFIG", "SET", "maxmemory-policy", policy);
        try (QuotaService quota = QuotaService.create(ConnectTimeouts.with(Map.of("warden.quota.endpoint",
                redis.server().uri())))) {
            assertThat(quota.toString()).contains("QuotaService");
        }
    }
}
