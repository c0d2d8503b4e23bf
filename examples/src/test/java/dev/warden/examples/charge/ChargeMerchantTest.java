package dev.warden.examples.charge;

import dev.warden.examples.Captured;
import dev.warden.examples.Config;
import dev.warden.examples.Settings;
import dev.warden.quota.QuotaService;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The copyable charge, as a user runs it: a settings file naming a real Redis (testkit's) for quotas and lock. */
class ChargeMerchantTest {

    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    private static String settings(Path dir, String lock) {
        return Settings.file(dir, "billing.properties", "warden.quota.endpoint=" + server.server().uri(),
                "warden.quota.namespace=charge-" + lock, "warden.quota.lock=" + lock, "warden.quota.lock-wait=2s",
                "warden.lock.ttl=10s", Settings.PATIENT_QUOTA, Settings.PATIENT_LOCK);
    }

    @ParameterizedTest(name = "warden.quota.lock={0}")
    @ValueSource(strings = {"redis", "none"})
    @DisplayName("charges once, and the retry with the same request id charges nothing")
    void chargesOnce(String lock, @TempDir Path dir) {
        String file = settings(dir, lock);
        Captured out = new Captured();

        int first = ChargeMerchant.run(new String[] {file, "merchant-7", "5"}, out.stream);
        int second = ChargeMerchant.run(new String[] {file, "merchant-7", "3"}, out.stream);

        assertThat(first).as("output:%n%s", out).isZero();
        assertThat(second).as("output:%n%s", out).isZero();
        assertThat(out.text()).contains("merchant-7: plan opened with 1000 units", "applied, balance now 995",
                "the same request again: duplicate: already applied once (balance then 995), nothing charged",
                "merchant-7: plan already open", "applied, balance now 992");
        try (QuotaService quota = QuotaService.create(Config.load(file))) {
            assertThat(quota.balance("merchant-7")).hasValue(992);
        }
    }

    @Test
    @DisplayName("the last units of a plan are charged as they are; an empty plan is refused, exit 1")
    void planRunsOut(@TempDir Path dir) {
        String file = settings(dir, "redis");
        Captured out = new Captured();

        assertThat(ChargeMerchant.run(new String[] {file, "merchant-9", "600"}, out.stream)).isZero();
        assertThat(ChargeMerchant.run(new String[] {file, "merchant-9", "600"}, out.stream)).isZero();
        int refused = ChargeMerchant.run(new String[] {file, "merchant-9", "600"}, out.stream);

        assertThat(refused).as("output:%n%s", out).isEqualTo(1);
        assertThat(out.text()).contains("applied, balance now 400", "applied, balance now 0",
                "refused: insufficient quota (balance 0)");
    }

    @Test
    @DisplayName("the pricing step: the list price, or what is left of the plan")
    void pricing() {
        assertThat(ChargeMerchant.price(5, 100)).isEqualTo(5);
        assertThat(ChargeMerchant.price(5, 3)).isEqualTo(3);
        assertThat(ChargeMerchant.price(5, 0)).isEqualTo(5);
    }

    @Test
    @DisplayName("without a settings file: usage, exit 2")
    void usage() {
        Captured out = new Captured();
        assertThat(ChargeMerchant.run(new String[0], out.stream)).isEqualTo(2);
        assertThat(out.text()).startsWith("usage: ChargeMerchant <settings file>");
    }
}
