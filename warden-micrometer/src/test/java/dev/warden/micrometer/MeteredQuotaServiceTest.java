package dev.warden.micrometer;

import dev.warden.quota.Deduction;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.testkit.RedisServerExtension;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Quota meters and observations around a real quota service on a real Redis. */
class MeteredQuotaServiceTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    SimpleMeterRegistry meters;
    TestObservationRegistry observations;
    QuotaService quota;

    @BeforeEach
    void setUp() {
        meters = new SimpleMeterRegistry();
        observations = TestObservationRegistry.create();
        quota = new MeteredQuotaService(QuotaService.create(Map.of("warden.quota.endpoint", redis.server().uri(),
                "warden.quota.connect-timeout", "20s")),
                meters, observations, Tags.of("app", "test"));
    }

    @AfterEach
    void tearDown() {
        quota.close();
    }

    double outcomes(String operation, String outcome) {
        var c = meters.find(MeteredQuotaService.OUTCOMES).tag("operation", operation).tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    @Test
    @DisplayName("counts outcomes by operation and type, and times every call")
    void outcomesAndLatency() throws Exception {
        String account = "m-" + UUID.randomUUID();
        quota.open(account, 1_000);
        assertThat(quota.deduct(account, 300, "r1")).isInstanceOf(Outcome.Applied.class);
        assertThat(quota.deduct(account, 300, "r1")).isInstanceOf(Outcome.Duplicate.class);
        assertThat(quota.deduct(account, 5_000, "r2")).isInstanceOf(Outcome.Insufficient.class);
        assertThat(quota.deductAsync(account, 100, "r3").toCompletableFuture().get(5, TimeUnit.SECONDS))
                .isInstanceOf(Outcome.Applied.class);
        List<Outcome> batch = quota.deductAll(List.of(new Deduction(account, 1, "b1"), new Deduction(account, 1_000_000, "b2")));
        assertThat(batch).hasSize(2);
        assertThat(quota.charge(account, "c1", balance -> 10)).isInstanceOf(Outcome.Applied.class);

        assertThat(outcomes("open", "applied")).isEqualTo(1);
        assertThat(outcomes("deduct", "applied")).isEqualTo(2);
        assertThat(outcomes("deduct", "duplicate")).isEqualTo(1);
        assertThat(outcomes("deduct", "insufficient")).isEqualTo(1);
        assertThat(outcomes("deduct_all", "applied")).isEqualTo(1);
        assertThat(outcomes("deduct_all", "insufficient")).isEqualTo(1);
        assertThat(outcomes("charge", "applied")).isEqualTo(1);
        assertThat(meters.get(MeteredQuotaService.LATENCY).tag("operation", "deduct").timer().count()).isEqualTo(4);
        assertThat(meters.get(MeteredQuotaService.LATENCY).tag("operation", "deduct_all").timer().count()).isEqualTo(1);
        assertThat(meters.get(MeteredQuotaService.LATENCY).tag("app", "test").tag("operation", "open").timer().count())
                .isEqualTo(1);
    }

    @Test
    @DisplayName("counts failures by reason and still times them")
    void failures() {
        assertThatThrownBy(() -> quota.deduct("bad:id", 1, "r")).isInstanceOf(InvalidIdException.class);
        assertThat(meters.get(MeteredQuotaService.FAILURES).tag("operation", "deduct").tag("reason", "invalid_id")
                .counter().count()).isEqualTo(1);
        assertThat(meters.get(MeteredQuotaService.LATENCY).tag("operation", "deduct").timer().count()).isEqualTo(1);
    }

    @Test
    @DisplayName("observes deductions and charges with their outcome (low cardinality) and account (high)")
    void observations() {
        String account = "m-" + UUID.randomUUID();
        quota.open(account, 100);
        quota.charge(account, "c1", balance -> 500);
        quota.deduct(account, 10, "d1");

        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(MeteredQuotaService.CHARGE_OBSERVATION).that()
                .hasLowCardinalityKeyValue("outcome", "insufficient")
                .hasHighCardinalityKeyValue("account", account)
                .hasBeenStarted().hasBeenStopped();
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(MeteredQuotaService.DEDUCT_OBSERVATION).that()
                .hasLowCardinalityKeyValue("outcome", "applied");
    }

    @Test
    @DisplayName("chargeAsync is metered and observed as a charge, its failure by reason when the stage fails")
    void chargeAsync() throws Exception {
        String account = "m-" + UUID.randomUUID();
        quota.open(account, 100);
        assertThat(quota.chargeAsync(account, "a1", balance -> 40).toCompletableFuture().get(5, TimeUnit.SECONDS))
                .isInstanceOf(Outcome.Applied.class);
        assertThat(quota.chargeAsync(account, "a2", balance -> {
            throw new IllegalStateException("no price");
        }).toCompletableFuture().handle((o, e) -> e).get(5, TimeUnit.SECONDS)).isNotNull();

        assertThat(outcomes("charge", "applied")).isEqualTo(1);
        assertThat(meters.get(MeteredQuotaService.FAILURES).tag("operation", "charge").tag("reason", "other")
                .counter().count()).isEqualTo(1);
        assertThat(meters.get(MeteredQuotaService.LATENCY).tag("operation", "charge").timer().count()).isEqualTo(2);
        TestObservationRegistryAssert.assertThat(observations)
                .hasObservationWithNameEqualTo(MeteredQuotaService.CHARGE_OBSERVATION).that()
                .hasLowCardinalityKeyValue("outcome", "applied")
                .hasHighCardinalityKeyValue("account", account)
                .hasBeenStarted().hasBeenStopped();
    }
}
