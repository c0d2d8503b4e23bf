package dev.warden.lock.zookeeper;

import dev.warden.lock.tck.DocumentedSettings;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The documentation's tables name exactly the options this backend declares, each in full. */
class ZooKeeperSettingsDocumentedTest {

    private static final String PREFIX = "warden.lock.zookeeper.";

    @Test
    @DisplayName("docs/ names every warden.lock.zookeeper.* option the provider declares, and no other")
    void documentedAsDeclared() {
        TreeSet<String> declared = new TreeSet<>();
        new ZooKeeperLockProvider().optionNames().forEach(option -> declared.add(PREFIX + option));
        assertThat(DocumentedSettings.inTables(Path.of("..", "docs"), PREFIX)).containsExactlyElementsOf(declared);
    }
}
