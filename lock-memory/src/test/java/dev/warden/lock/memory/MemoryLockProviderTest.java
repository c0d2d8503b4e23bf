package dev.warden.lock.memory;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MemoryLockProviderTest {

    @Test
    @DisplayName("is chosen by configuration like any backend; a store is shared by name, and only by name")
    void storesByName() {
        try (LockClient a = LockClient.create(URI.create("memory://shared?ttl=5s"));
             LockClient b = LockClient.create(Map.of("warden.lock.backend", "memory", "warden.lock.endpoints", "memory://shared"));
             LockClient other = LockClient.create(URI.create("memory://elsewhere"))) {
            assertThat(a.backend()).isEqualTo("memory");
            try (Lease held = a.lock("merchant-42").acquire()) {
                assertThat(b.lock("merchant-42").tryAcquire(Duration.ZERO)).as("same store, same lock").isEmpty();
                try (Lease elsewhere = other.lock("merchant-42").tryAcquire(Duration.ZERO).orElseThrow()) {
                    assertThat(elsewhere.isValid()).as("another store is another server").isTrue();
                }
                assertThat(held.isValid()).isTrue();
            }
        }
    }

    @Test
    @DisplayName("endpoints other than one memory://<store> are configuration errors, all reported")
    void badEndpoints() {
        assertThatThrownBy(() -> LockClient.create(Map.of("warden.lock.backend", "memory",
                "warden.lock.endpoints", "memory://a,redis://b:1,memory://x/y")))
                .isInstanceOfSatisfying(LockException.class, e -> {
                    assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                    assertThat(e.getMessage()).contains("exactly one endpoint", "'redis://b:1' is not a memory endpoint",
                            "'memory://x/y' is not a memory endpoint");
                });
    }
}
