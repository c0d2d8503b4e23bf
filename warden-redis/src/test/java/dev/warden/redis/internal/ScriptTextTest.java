package dev.warden.redis.internal;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScriptTextTest {

    @Test
    void digestIsRedisSha1() {
        // What `redis-cli SCRIPT LOAD "return 1"` answers.
        assertThat(ScriptText.digest("return 1")).isEqualTo("e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
    }

    @Test
    void missingResourceIsNamed() {
        assertThatThrownBy(() -> ScriptText.read(ScriptTextTest.class, "/dev/warden/redis/none.lua"))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("/dev/warden/redis/none.lua");
    }

    @Test
    void readsTheResource() {
        assertThat(ScriptText.read(ScriptTextTest.class, "/dev/warden/redis/internal/sample.lua")).isEqualTo("return 1\n");
    }
}
