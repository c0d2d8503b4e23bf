package dev.warden.quota;

import dev.warden.quota.redis.QuotaConfig;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The settings table of docs/quota.md names exactly the settings the engine reads: a setting added to
 * {@link QuotaConfig} without its row, or a row for a setting that no longer exists, fails here.
 */
class SettingsDocumentedTest {

    private static final Path PAGE = Path.of("..", "docs", "quota.md");
    private static final String HEADER = "| setting | meaning | default |";
    private static final Pattern NAME = Pattern.compile("`(warden\\.quota\\.[a-z.-]+)`");

    @Test
    @DisplayName("docs/quota.md's settings table and QuotaConfig name the same settings")
    void tableMatchesTheDeclaredSettings() throws IOException {
        assertThat(documented()).containsExactlyElementsOf(QuotaConfig.settingNames());
    }

    /** The full names in the first column of the table under {@link #HEADER}. */
    private static TreeSet<String> documented() throws IOException {
        List<String> lines = Files.readAllLines(PAGE, StandardCharsets.UTF_8);
        int header = lines.indexOf(HEADER);
        assertThat(header).as("%s has a settings table", PAGE).isNotNegative();
        TreeSet<String> names = new TreeSet<>();
        for (String line : lines.subList(header + 2, lines.size())) {
            if (!line.startsWith("|")) {
                break;
            }
            String first = line.substring(1, line.indexOf('|', 1));
            Matcher m = NAME.matcher(first);
            while (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }
}
