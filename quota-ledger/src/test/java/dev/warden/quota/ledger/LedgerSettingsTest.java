package dev.warden.quota.ledger;

import dev.warden.quota.QuotaException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** A consumer built from a settings map reads warden.ledger.*; a builder method overrides a setting. Nothing connects. */
class LedgerSettingsTest {

    /** Never asked for a connection: building a consumer does not connect. */
    private static final DataSource UNUSED = (DataSource) Proxy.newProxyInstance(LedgerSettingsTest.class.getClassLoader(),
            new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                throw new AssertionError("building a consumer must not use the database: " + method.getName());
            });

    @Test
    @DisplayName("warden.ledger.* settings choose the group, name and partitions; a builder method wins")
    void settingsThenBuilder() {
        Map<String, Object> settings = Map.of("warden.quota.endpoint", "redis://127.0.0.1:1",
                "warden.ledger.group", "billing", "warden.ledger.consumer-name", "node-a", "warden.ledger.partitions", "0, 3",
                "warden.ledger.batch-size", "50", "warden.ledger.retry-backoff-max", "2s");
        assertThat(LedgerConsumer.builder(settings, UNUSED).build())
                .hasToString("LedgerConsumer[billing/node-a, 2 partitions]");
        assertThat(LedgerConsumer.builder(settings, UNUSED).group("audit").build())
                .hasToString("LedgerConsumer[audit/node-a, 2 partitions]");
    }

    @Test
    @DisplayName("every bad or unknown warden.ledger.* setting is named in the one CONFIGURATION error")
    void everyProblemAtOnce() {
        QuotaException e = catchThrowableOfType(QuotaException.class, () -> LedgerConsumer.builder(Map.of(
                "warden.quota.endpoint", "redis://127.0.0.1:1", "warden.ledger.batch-size", "0",
                "warden.ledger.partitions", "0,x", "warden.ledger.block-time", "soon", "warden.ledger.colour", "blue",
                "warden.ledger.retry-backoff-initial", "20s"), UNUSED).build());
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("warden.ledger.batch-size must be 1..10000, was 0",
                "warden.ledger.partitions: '0,x' is not a comma-separated list", "warden.ledger.block-time: 'soon' is not a duration",
                "unknown setting warden.ledger.colour", "retryBackoff initial PT20S exceeds max PT10S");
    }
}
