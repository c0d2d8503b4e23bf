package dev.warden.lock.etcd;

import dev.warden.lock.tck.DocumentedSettings;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/** The documentation's tables name exactly the options this backend declares, each in full. */
class EtcdSettingsDocumentedTest {

    private static final String PREFIX = "warden.lock.etcd.";

    @Test
    @DisplayName("docs/ names every warden.lock.etcd.* option the provider declares, and no other")
    void documentedAsDeclared() {
        TreeSet<String> declared = new TreeSet<>();
        new EtcdLockProvider().optionNames().forEach(option -> declared.add(PREFIX + option));
        assertThat(DocumentedSettings.inTables(Path.of("..", "docs"), PREFIX)).containsExactlyElementsOf(declared);
    }
}
