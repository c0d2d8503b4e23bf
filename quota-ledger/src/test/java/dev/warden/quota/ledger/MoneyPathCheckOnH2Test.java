package dev.warden.quota.ledger;

import dev.warden.testkit.RedisServer;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

import java.util.List;

/**
 * {@link MoneyPathCheckTest}'s programs with the ledger on H2 (the demo's embedded default), whose batches
 * take their own statements (a JDBC batch insert of the entries, the guarded net updates), and with charges
 * combined ({@code warden.quota.combine-charges}: every charge through the rounds' priced-on deductions): the same
 * model, the same checks, another seed.
 */
class MoneyPathCheckOnH2Test {

    private static RedisServer redis;
    private static MoneySystem system;
    private static long programs;
    private static long started;

    @BeforeContainer
    static void start() {
        redis = RedisServer.start();
        system = MoneySystem.onH2(redis);
        started = System.nanoTime();
    }

    @AfterContainer
    static void stop() {
        System.out.printf("money path checker on H2: %d programs, %d steps executed in %d s%n", programs,
                system == null ? 0 : system.executed(), (System.nanoTime() - started) / 1_000_000_000L);
        try (RedisServer r = redis) {
            if (system != null) {
                system.close();
            }
        }
    }

    @Property(seed = "20261203", tries = 100, shrinking = ShrinkingMode.FULL)
    void moneyStaysExact(@ForAll("programs") List<MoneyStep> program) {
        programs++;
        try {
            system.check(program);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nreplay:\n" + MoneyStep.program(program), e);
        }
    }

    @Provide
    Arbitrary<List<MoneyStep>> programs() {
        return MoneyPrograms.programs();
    }
}
