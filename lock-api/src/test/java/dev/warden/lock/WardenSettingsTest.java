package dev.warden.lock;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The one grammar of settings that locks, quota, the CLI, the demo and the starter share. */
class WardenSettingsTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({"500ms, PT0.5S", "30s, PT30S", "2m, PT2M", "1h, PT1H", "1d, PT24H", "7D, PT168H", "PT30S, PT30S",
            "P1D, PT24H", "' 10s ', PT10S", "0s, PT0S"})
    @DisplayName("durations: a whole number and ms, s, m, h or d, or ISO-8601")
    void durations(String text, String expected) {
        assertThat(WardenSettings.duration(text)).isEqualTo(Duration.parse(expected));
    }

    @ParameterizedTest(name = "''{0}''")
    @ValueSource(strings = {"1.5s", "-1s", "+1s", "1 s", "10", "s", "", "1w", "PT", "1sec", "0x10s", "9999999999999s"})
    @DisplayName("anything else is refused with one message naming the text and the forms")
    void refused(String text) {
        assertThatThrownBy(() -> WardenSettings.duration(text)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + text + "'").hasMessageContaining(WardenSettings.DURATION_FORMS);
    }

    @Test
    @DisplayName("environment variables: WARDEN_LOCK_TTL is warden.lock.ttl; _ is -, __ is .; other variables are left out")
    void environment() {
        Map<String, String> settings = WardenSettings.fromEnvironment(Map.of(
                "WARDEN_LOCK_TTL", "10s",
                "WARDEN_QUOTA_LOCK_WAIT", "2s",
                "WARDEN_LOCK_ZOOKEEPER__LOST_ON", "lost",
                "WARDEN_QUOTA_IDEMPOTENCY_RETENTION", "1h",
                "WARDEN_JDBC_PASSWORD", "secret",
                "PATH", "/usr/bin"));
        assertThat(settings).containsExactlyInAnyOrderEntriesOf(Map.of(
                "warden.lock.ttl", "10s",
                "warden.quota.lock-wait", "2s",
                "warden.lock.zookeeper.lost-on", "lost",
                "warden.quota.idempotency-retention", "1h"));
    }

    @Test
    @DisplayName("system properties: only warden.lock.* and warden.quota.*")
    void systemProperties() {
        Properties p = new Properties();
        p.setProperty("warden.lock.ttl", "10s");
        p.setProperty("warden.quota.endpoint", "redis://127.0.0.1:6379");
        p.setProperty("java.version", "17");
        assertThat(WardenSettings.fromSystemProperties(p)).containsExactlyInAnyOrderEntriesOf(Map.of(
                "warden.lock.ttl", "10s", "warden.quota.endpoint", "redis://127.0.0.1:6379"));
    }

    @Test
    @DisplayName("explicit settings win over system properties, which win over the environment")
    void layering() {
        String key = "warden.lock.request-timeout";
        System.setProperty(key, "7s");
        try {
            assertThat(WardenSettings.withSystemDefaults(Map.of())).containsEntry(key, "7s");
            assertThat(WardenSettings.withSystemDefaults(Map.of(key, "3s"))).containsEntry(key, "3s");
        } finally {
            System.clearProperty(key);
        }
    }

    @Test
    @DisplayName("the lock client takes the same forms: 1d is a valid TTL, 1.5s is refused with the grammar's message")
    void lockSettingsUseTheGrammar() {
        assertThatThrownBy(() -> LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints",
                "redis://127.0.0.1:1", "warden.lock.ttl", "1.5s")))
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isIn(
                        LockException.Reason.CONFIGURATION, LockException.Reason.NO_PROVIDER))
                .hasMessageContaining("'1.5s' is not a duration");
    }

    @Test
    @DisplayName("a secret comes inline, from a file (without its line break) or from an environment variable; errors never show it")
    void secrets(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String key = "warden.lock.redis.password";
        Map<String, String> env = Map.of("REDIS_PW", "from-env-s3cret");
        java.nio.file.Path file = dir.resolve("pw");
        java.nio.file.Files.writeString(file, "from-file-s3cret\n");
        assertThat(WardenSettings.secret(Map.of(), key, env::get)).isEmpty();
        assertThat(WardenSettings.secret(Map.of(key, "inline-s3cret"), key, env::get)).contains("inline-s3cret");
        assertThat(WardenSettings.secret(Map.of(key + "-file", file.toString()), key, env::get)).contains("from-file-s3cret");
        assertThat(WardenSettings.secret(Map.of(key + "-env", "REDIS_PW"), key, env::get)).contains("from-env-s3cret");
        assertThatThrownBy(() -> WardenSettings.secret(Map.of(key, "inline-s3cret", key + "-env", "REDIS_PW"), key, env::get))
                .hasMessageContaining("set only one").hasMessageNotContaining("s3cret");
        assertThatThrownBy(() -> WardenSettings.secret(Map.of(key + "-env", "NOT_SET"), key, env::get))
                .hasMessageContaining("NOT_SET, which is not set");
        assertThatThrownBy(() -> WardenSettings.secret(Map.of(key + "-file", dir.resolve("missing").toString()), key, env::get))
                .hasMessageContaining("cannot be read");
    }
}
