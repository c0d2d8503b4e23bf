package dev.warden.lock.redis.internal;

import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class KeysTest {

    @ParameterizedTest
    @ValueSource(strings = {"merchant-42", "ünïcode ☃", "a}b", "{x}", "}", "a:b}:lock", "{"})
    void aLocksKeysShareOneClusterSlotWhateverTheName(String name) {
        Keys keys = Keys.of("billing", name);

        assertThat(keys.lock()).isEqualTo("{billing:" + name + "}:lock");
        assertThat(keys.fence()).isEqualTo("{billing:" + name + "}:fence");
        assertThat(keys.channel()).isEqualTo("{billing:" + name + "}:released");
        assertThat(SlotHash.getSlot(keys.fence())).isEqualTo(SlotHash.getSlot(keys.lock()));
    }

    @Test
    void distinctNamesNeverShareAKey() {
        List<String> names = List.of("x", "x}:lock", "x}:fence", "x}:fence}:lock", "x}", "{x");
        Set<String> keys = new HashSet<>();
        for (String name : names) {
            Keys k = Keys.of("ns", name);
            keys.add(k.lock());
            keys.add(k.fence());
        }
        assertThat(keys).hasSize(2 * names.size());
    }
}
