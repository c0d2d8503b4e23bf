package dev.warden.lock.settings;

import dev.warden.lock.WardenSettings;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SettingTableTest {

    enum Mode { FAIL, PROCEED_UNLOCKED }

    static final Setting<String> NAME = Setting.text("warden.test.name", null, "a name")
            .matching(Pattern.compile("[a-z]+"), "must be lower-case letters").required("e.g. billing");
    static final Setting<Duration> WAIT = Setting.duration("warden.test.wait", Duration.ofSeconds(10), "a wait")
            .check(d -> !d.isZero(), d -> "must be positive, was " + d);
    static final Setting<Integer> COUNT = Setting.whole("warden.test.count", 16, 1, 64, "a count");
    static final Setting<Boolean> ON = Setting.flag("warden.test.on", false, "a flag");
    static final Setting<Mode> MODE = Setting.oneOf("warden.test.mode", Mode.class, Mode.FAIL, "a mode");
    static final Setting<List<String>> HOSTS = Setting.list("warden.test.hosts", "hosts");
    static final Setting<String> PASSWORD = Setting.secret("warden.test.password", "a password");
    static final SettingTable TABLE = new SettingTable("warden.test.", "A test area",
            List.of(NAME, WAIT, COUNT, ON, MODE, HOSTS, PASSWORD));

    @Test
    @DisplayName("typed values, defaults where nothing is given, and the undeclared keys left over")
    void readsTypedValues() {
        SettingTable.Values v = TABLE.read(Map.of("warden.test.name", " billing ", "warden.test.wait", "500ms",
                "warden.test.mode", "proceed-unlocked", "warden.test.hosts", "a, b", "warden.test.password-env", "PW",
                "warden.test.colour", "blue", "warden.other.key", "x"), name -> name.equals("PW") ? "s3cret" : null);
        assertThat(v.problems()).isEmpty();
        assertThat(v.get(NAME)).isEqualTo("billing");
        assertThat(v.get(WAIT)).isEqualTo(Duration.ofMillis(500));
        assertThat(v.get(COUNT)).isEqualTo(16);
        assertThat(v.get(ON)).isFalse();
        assertThat(v.get(MODE)).isEqualTo(Mode.PROCEED_UNLOCKED);
        assertThat(v.get(HOSTS)).containsExactly("a", "b");
        assertThat(v.get(PASSWORD)).isEqualTo("s3cret");
        assertThat(v.others()).containsExactlyEntriesOf(Map.of("colour", "blue"));
    }

    @Test
    @DisplayName("every problem at once, each naming its key, never a secret")
    void everyProblemAtOnce() {
        SettingTable.Values v = TABLE.read(Map.of("warden.test.wait", "0s", "warden.test.count", "65",
                "warden.test.on", "yes", "warden.test.mode", "maybe", "warden.test.hosts", "a,,b",
                "warden.test.password", "s3cret", "warden.test.password-file", "/nowhere"), name -> null);
        assertThat(v.problems()).containsExactly(
                "warden.test.name is required, e.g. billing",
                "warden.test.wait must be positive, was PT0S",
                "warden.test.count must be 1..64, was 65",
                "warden.test.on: 'yes' is not true or false",
                "warden.test.mode: 'maybe' is not one of fail, proceed-unlocked",
                "warden.test.hosts: contains an empty entry",
                "warden.test.password, warden.test.password-file and warden.test.password-env: set only one");
        assertThat(String.join(" ", v.problems())).doesNotContain("s3cret");
        assertThat(TABLE.read(Map.of("warden.test.name", "Billing"), n -> null).problems())
                .containsExactly("warden.test.name 'Billing' must be lower-case letters");
    }

    @Test
    @DisplayName("the keys, their environment names, and the reference table")
    void keysAndReference() {
        assertThat(TABLE.keys()).contains("warden.test.password", "warden.test.password-file", "warden.test.password-env");
        assertThat(TABLE.names()).contains("wait", "password-env").doesNotContain("warden.test.wait");
        assertThat(SettingTable.environmentName("warden.lock.connect-timeout")).isEqualTo("WARDEN_LOCK_CONNECT_TIMEOUT");
        assertThat(SettingTable.environmentName("warden.lock.redis.tls.trust-store"))
                .isEqualTo("WARDEN_LOCK_REDIS__TLS__TRUST_STORE");
        for (String key : LockSettings.TABLE.keys()) {
            assertThat(WardenSettings.fromEnvironment(Map.of(SettingTable.environmentName(key), "v"))).containsOnlyKeys(key);
        }
        assertThat(TABLE.markdown()).startsWith("| setting | default | meaning |\n|---|---|---|\n")
                .contains("| `warden.test.name` | required | a name |")
                .contains("| `warden.test.wait` | `10s` | a wait |")
                .contains("| `warden.test.mode` | `fail` | a mode |")
                .contains("| `warden.test.password`, `warden.test.password-file`, `warden.test.password-env` | none | a password |");
    }

    @Test
    @DisplayName("a key outside the prefix, or declared twice, is refused when the table is built")
    void declaredOnce() {
        assertThatThrownBy(() -> new SettingTable("warden.test.", "t", List.of(NAME, NAME)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("warden.test.name");
        assertThatThrownBy(() -> new SettingTable("warden.other.", "t", List.of(WAIT)))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
