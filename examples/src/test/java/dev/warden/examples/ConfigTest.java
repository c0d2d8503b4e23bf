package dev.warden.examples;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The examples' settings: the file over -Dwarden.* system properties, Warden's own order. */
class ConfigTest {

    @AfterEach
    void clear() {
        System.clearProperty("warden.lock.ttl");
        System.clearProperty("warden.lock.namespace");
        System.clearProperty("ledger.jdbc-url");
    }

    @Test
    @DisplayName("the file wins; a system property fills in what the file leaves out")
    void fileOverSystemProperties(@TempDir Path dir) {
        String file = Settings.file(dir, "a.properties", "warden.lock.ttl=10s", "ledger.jdbc-user=ledger  ");
        System.setProperty("warden.lock.ttl", "3s");
        System.setProperty("warden.lock.namespace", "from-jvm");
        System.setProperty("ledger.jdbc-url", "jdbc:h2:mem:x");

        Map<String, Object> settings = Config.load(file);

        assertThat(settings).containsEntry("warden.lock.ttl", "10s").containsEntry("warden.lock.namespace", "from-jvm")
                .containsEntry("ledger.jdbc-user", "ledger");
        assertThat(Config.get(settings, "ledger.jdbc-user", null)).isEqualTo("ledger");
        assertThat(Config.get(settings, "ledger.jdbc-url", null)).isEqualTo("jdbc:h2:mem:x");
        assertThat(Config.get(settings, "ledger.pool", "4")).isEqualTo("4");
    }

    @Test
    @DisplayName("no file: system properties alone; a missing file is an error naming it")
    void noFile() {
        System.setProperty("warden.lock.namespace", "from-jvm");

        assertThat(Config.load(null)).containsEntry("warden.lock.namespace", "from-jvm");
        assertThatThrownBy(() -> Config.load("/no/such/file.properties")).isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining("/no/such/file.properties");
    }
}
