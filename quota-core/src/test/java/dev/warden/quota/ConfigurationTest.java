package dev.warden.quota;

import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @Test
    @DisplayName("every problem is reported in one CONFIGURATION error")
    void everyProblemAtOnce() {
        QuotaException e = catchThrowableOfType(QuotaException.class, () -> QuotaService.create(Map.of(
                "warden.quota.partitions", "0",
                "warden.quota.idempotency-retention", "forever",
                "warden.quota.lock", "memcached",
                "warden.quota.colour", "blue",
                "unrelated.key", "ignored")));
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("warden.quota.endpoint", "warden.quota.partitions",
                "warden.quota.idempotency-retention", "warden.quota.lock", "warden.quota.colour");
    }

    @Test
    @DisplayName("a lock backend that is not on the class path is a CONFIGURATION error, not a silent unlocked charge")
    void missingLockBackend() {
        QuotaException e = catchThrowableOfType(QuotaException.class, () -> QuotaService.create(ConnectTimeouts.with(Map.of(
                "warden.quota.endpoint", redis.server().uri(),
                "warden.quota.lock", "etcd",
                "warden.lock.endpoints", "http://127.0.0.1:2379"))));
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
        e = catchThrowableOfType(QuotaException.class, () -> QuotaService.create(Map.of(
                "warden.quota.endpoint", redis.server().uri(), "warden.quota.lock", "zookeeper")));
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("warden.lock.endpoints");
        e = catchThrowableOfType(QuotaException.class, () -> QuotaService.create(Map.of(
                "warden.quota.endpoint", redis.server().uri(), "warden.quota.lock", "redis",
                "warden.lock.backend", "etcd")));
        assertThat(e.getMessage()).contains("contradicts");
    }

    @Test
    @DisplayName("properties, Durations and unreachable servers")
    void propertiesAndUnreachable() {
        Properties p = new Properties();
        p.setProperty("warden.quota.endpoint", redis.server().uri());
        p.setProperty("warden.quota.idempotency-retention", "1d");
        p.setProperty("warden.quota.partitions", "64");
        p.putAll(ConnectTimeouts.SETTINGS);
        try (QuotaService quota = QuotaService.create(p)) {
            assertThat(quota.open("m-props", 1)).isInstanceOf(Outcome.Applied.class);
            assertThat(redis.server().command("EXISTS", "quota:{p" + new dev.warden.quota.redis.KeyLayout(64)
                    .partition("m-props") + "}:marker")).isEqualTo(1L);
        }
        QuotaException e = catchThrowableOfType(QuotaException.class, () -> QuotaService.create(Map.of(
                "warden.quota.endpoint", "redis://127.0.0.1:1", "warden.quota.connect-timeout", Duration.ofSeconds(2))));
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.UNAVAILABLE);
    }
}
