package dev.warden.micrometer;

import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServerExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Ledger meters from a real consumer draining a real Redis journal into H2. */
class MicrometerLedgerListenerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final Duration DEADLINE = Duration.ofSeconds(30);

    double counter(SimpleMeterRegistry registry, String name, String tag, String value) {
        Counter c = registry.find(name).tag(tag, value).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    @DisplayName("entries drained, backlog down to zero, partitions owned, and a malformed journal entry quarantined")
    void drainBacklogQuarantine() {
        String namespace = "ledger-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Object> settings = Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.namespace", namespace, "warden.quota.partitions", "2",
                "warden.lock.namespace", namespace, "warden.lock.ttl", "5s",
                // Connecting is not what this test measures: patient enough for a cold JVM on a loaded host.
                "warden.quota.connect-timeout", "20s", "warden.lock.connect-timeout", "20s");
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:meters-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        Ledger.migrate(ds);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();

        try (QuotaService quota = QuotaService.create(settings)) {
            for (int i = 0; i < 10; i++) {
                String account = "m-" + i;
                quota.open(account, 1_000);
                quota.deduct(account, 10, "r-" + i);
            }
            // A damaged journal entry, written at the server: the database must refuse it into quarantine.
            redis.server().command("XADD", new KeyLayout(namespace, 2).journal(0), "*", "garbage", "1");

            try (LedgerConsumer consumer = LedgerConsumer.builder(settings, ds)
                    .listener(new MicrometerLedgerListener(registry, Tags.empty()))
                    .lagInterval(Duration.ofMillis(100))
                    .blockTime(Duration.ofMillis(100))
                    .build().start()) {
                Await.until(DEADLINE, "20 entries applied and one quarantined", () ->
                        counter(registry, MicrometerLedgerListener.ENTRIES, "result", "applied") == 20
                                && counter(registry, MicrometerLedgerListener.QUARANTINED, "reason", "malformed") == 1);
                Await.until(DEADLINE, "the backlog reported drained", () ->
                        registry.get(MicrometerLedgerListener.PARTITIONS).gauge().value() == 2
                                && registry.get(MicrometerLedgerListener.BACKLOG).tag("state", "pending").gauge().value() == 0
                                && registry.get(MicrometerLedgerListener.BACKLOG).tag("state", "undelivered").gauge().value() == 0);
                assertThat(counter(registry, MicrometerLedgerListener.ENTRIES, "result", "quarantined")).isEqualTo(1);
                assertThat(registry.get(MicrometerLedgerListener.BATCHES).timer().count()).isPositive();
                assertThat(consumer.backlog()).isZero();
            }
        }
    }
}
