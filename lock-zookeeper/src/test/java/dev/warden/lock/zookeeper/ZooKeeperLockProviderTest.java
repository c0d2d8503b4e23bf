package dev.warden.lock.zookeeper;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Configuration is checked before anything connects, and every problem is named at once. */
class ZooKeeperLockProviderTest {

    @Test
    @DisplayName("the provider is found by ServiceLoader under the name zookeeper")
    void found() {
        assertThat(new ZooKeeperLockProvider().backend()).isEqualTo("zookeeper");
        assertThat(new ZooKeeperLockProvider().optionNames()).contains("lost-on", "username", "password", "password-file",
                "password-env", "acl", "tls.trust-store", "tls.key-store-password-env");
    }

    @Test
    @DisplayName("bad endpoints, namespace and options are reported together as CONFIGURATION")
    void badSettings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", "redis://127.0.0.1:6379,zookeeper://127.0.0.1:2181/chroot,zookeeper://:2181");
        s.put("warden.lock.namespace", "zookeeper");
        s.put("warden.lock.zookeeper.lost-on", "never");
        assertThatThrownBy(() -> LockClient.create(s))
                .isInstanceOfSatisfying(LockException.class, e -> {
                    assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                    assertThat(e.getMessage()).contains("redis://127.0.0.1:6379", "chroot", "zookeeper://:2181",
                            "reserved", "lost-on 'never'");
                });
    }

    @Test
    @DisplayName("an unknown zookeeper option is refused with the options that exist")
    void unknownOption() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", "zookeeper://127.0.0.1:2181");
        s.put("warden.lock.zookeeper.lost_on", "lost");
        assertThatThrownBy(() -> LockClient.create(s))
                .isInstanceOfSatisfying(LockException.class, e -> {
                    assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                    assertThat(e.getMessage()).contains("lost_on", "lost-on");
                });
    }
}
