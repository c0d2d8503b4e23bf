package dev.warden.lock.internal.config;

import dev.warden.lock.settings.LockSettings;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** docs/locks.md's settings table names exactly the settings every backend shares ({@link LockSettings#TABLE}). */
class SettingsDocumentedTest {

    /** A shared setting: one word after the prefix (backend options have their backend's name between). */
    private static final Pattern COMMON_NAME = Pattern.compile("`warden\\.lock\\.([a-z-]+)`");

    @Test
    @DisplayName("docs/locks.md's table and Settings name the same common settings")
    void documentedAsDeclared() throws IOException {
        TreeSet<String> documented = new TreeSet<>();
        for (String line : Files.readAllLines(Path.of("..", "docs", "locks.md"), StandardCharsets.UTF_8)) {
            if (line.startsWith("|") && line.indexOf('|', 1) > 0) {
                Matcher m = COMMON_NAME.matcher(line.substring(1, line.indexOf('|', 1)));
                while (m.find()) {
                    documented.add(m.group(1));
                }
            }
        }
        assertThat(documented).containsExactlyElementsOf(LockSettings.TABLE.names());
    }
}
