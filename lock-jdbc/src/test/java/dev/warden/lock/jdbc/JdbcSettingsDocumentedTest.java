package dev.warden.lock.jdbc;

import dev.warden.lock.tck.DocumentedSettings;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The documentation's tables name exactly the options this backend declares, each in full. */
class JdbcSettingsDocumentedTest {

    private static final String PREFIX = "warden.lock.jdbc.";

    @Test
    @DisplayName("docs/ names every warden.lock.jdbc.* option the provider declares, and no other")
    void documentedAsDeclared() {
        TreeSet<String> declared = new TreeSet<>();
        new JdbcLockProvider().optionNames().forEach(option -> declared.add(PREFIX + option));
        assertThat(DocumentedSettings.inTables(Path.of("..", "docs"), PREFIX)).containsExactlyElementsOf(declared);
    }
}
