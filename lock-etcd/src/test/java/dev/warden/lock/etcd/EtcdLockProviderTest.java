package dev.warden.lock.etcd;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.etcd.internal.Keys;
import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@DisplayName("etcd provider: configuration and key layout")
class EtcdLockProviderTest {

    private static EtcdServer server;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    @DisplayName("bad endpoints are reported together, as CONFIGURATION")
    void badEndpoints() {
        assertThatThrownBy(() -> LockClient.create(Map.of("warden.lock.backend", "etcd",
                "warden.lock.endpoints", "http://a:1,etcd://nohostport,etcd://u:p@h:2,etcds://h:3",
                "warden.lock.etcd.tls.key-store", "/no/such/store.p12")))
                .isInstanceOf(LockException.class)
                .satisfies(e -> {
                    assertThat(((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                    assertThat(e.getMessage()).contains("http://a:1", "etcd://nohostport", "credentials", "mix etcd:// and etcds://",
                            "tls.key-store '/no/such/store.p12' is not a readable file");
                });
    }

    @Test
    @DisplayName("a TTL that is not whole seconds is refused")
    void fractionalTtl() {
        assertThatThrownBy(() -> LockClient.create(Map.of("warden.lock.backend", "etcd",
                "warden.lock.endpoints", server.endpoints(), "warden.lock.ttl", "1500ms")))
                .isInstanceOf(LockException.class)
                .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
    }

    @Test
    @DisplayName("a TTL below the cluster's minimum lease TTL is refused rather than silently lengthened")
    void ttlBelowClusterMinimum() {
        // etcd's minimum with its default timing (100 ms heartbeat, 1 s election timeout) is 2 s.
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        assertThatThrownBy(() -> LockClient.create(Map.of("warden.lock.backend", "etcd",
                "warden.lock.endpoints", server.endpoints(), "warden.lock.ttl", "1s", "warden.lock.connect-timeout", "20s")))
                .isInstanceOf(LockException.class)
                .satisfies(e -> {
                    assertThat(((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                    assertThat(e.getMessage()).contains("warden.lock.ttl=2s");
                });
    }

    @Test
    @DisplayName("several endpoints are accepted and the provider is found by its backend name")
    void severalEndpoints() {
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        try (LockClient c = LockClient.create(Map.of("warden.lock.backend", "etcd",
                "warden.lock.endpoints", server.endpoints() + ",etcd://127.0.0.1:1", "warden.lock.ttl", "2s",
                "warden.lock.connect-timeout", "20s"))) {
            assertThat(c.backend()).isEqualTo("etcd");
            assertThat(c.lock("x").tryAcquire(java.time.Duration.ofSeconds(5))).isPresent();
        }
    }

    @Test
    @DisplayName("no lock's queue lies inside another's, and no namespace inside another")
    void keysDoNotNest() {
        assertThat(Keys.queuePrefix("ns", "a/b")).isEqualTo("ns/a%2Fb/");
        assertThat(Keys.queuePrefix("ns", "a")).isEqualTo("ns/a/");
        assertThat(Keys.queuePrefix("ns/a", "b")).isEqualTo("ns%2Fa/b/");
        assertThat(Keys.queuePrefix("ns", "ab")).doesNotStartWith(Keys.queuePrefix("ns", "a"));
        assertThat(Keys.queuePrefix("ns", "订单:{42}")).isEqualTo("ns/%E8%AE%A2%E5%8D%95%3A%7B42%7D/");
    }
}
