package dev.warden.quota;

import dev.warden.quota.shared.QuotaServices;
import dev.warden.quota.redis.QuotaConfig;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.RedisConnector;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A quota service over a connector its caller owns (the ledger's consumer and reconciler compensate
 * this way, on their own client): it works like any other, and closing it leaves the connector open.
 */
class SharedConnectorTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static long clients() {
        String info = String.valueOf(redis.server().command("INFO", "clients"));
        return Long.parseLong(RedisConnector.infoField(info, "connected_clients").trim());
    }

    @Test
    @DisplayName("a service over a borrowed connector deducts on two connections of its client, and closes only those")
    void borrowed() {
        QuotaConfig config = QuotaConfig.from(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.namespace", "shared")));
        try (RedisConnector connector = RedisConnector.create(config)) {
            RedisConnection own = connector.connect();
            long before = clients();
            QuotaService quota = QuotaServices.over(connector, config.withoutLock());
            assertThat(clients()).isEqualTo(before + 2);
            assertThat(quota.open("acct-1", 10).isApplied()).isTrue();
            assertThat(quota.deduct("acct-1", 3, "req-1").isApplied()).isTrue();

            quota.close();
            Await.until(Duration.ofSeconds(10), "the service's two connections closed", () -> clients() == before);
            assertThat(own.sync().ping()).isEqualTo("PONG");
            try (QuotaService again = QuotaServices.over(connector, config)) {
                assertThat(again.balance("acct-1")).isEqualTo(OptionalLong.of(7));
                assertThat(again.deduct("acct-1", 3, "req-1").status()).isEqualTo(Outcome.Status.DUPLICATE);
            }
        }
    }

    @Test
    @DisplayName("settings naming another Redis than the connector's are refused")
    void anotherRedis() {
        QuotaConfig config = QuotaConfig.from(ConnectTimeouts.with(Map.of("warden.quota.endpoint", redis.server().uri())));
        QuotaConfig elsewhere = QuotaConfig.from(Map.of("warden.quota.endpoint", "redis://127.0.0.1:1"));
        try (RedisConnector connector = RedisConnector.create(config)) {
            assertThatThrownBy(() -> QuotaServices.over(connector, elsewhere))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("another Redis");
        }
    }

    @Test
    @DisplayName("withoutLock keeps the engine's settings and drops the lock and its warden.lock.* settings")
    void withoutLock() {
        QuotaConfig config = QuotaConfig.from(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.lock", "memory", "warden.lock.ttl", "5s", "warden.quota.partitions", "4"));
        QuotaConfig unlocked = config.withoutLock();
        assertThat(config.lock()).isEqualTo(QuotaConfig.LockChoice.MEMORY);
        assertThat(config.lockSettings()).isNotEmpty();
        assertThat(unlocked.lock()).isEqualTo(QuotaConfig.LockChoice.NONE);
        assertThat(unlocked.lockSettings()).isEmpty();
        assertThat(unlocked.endpoint()).isEqualTo(config.endpoint());
        assertThat(unlocked.partitions()).isEqualTo(4);
    }
}
