package dev.warden.quota.ledger;

import dev.warden.testkit.PostgresServer;
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
 * The money path's model-based checker: generated programs of every quota operation, with retries of
 * the same request ids, consumers that stop, die or freeze mid-batch, moves cut between their steps, the
 * retention passing, Redis restarting empty and the recovery tools run at any point, each step checked
 * against {@link MoneyModel} on a real Redis and a real PostgreSQL ({@link MoneySystem}, {@link MoneyChecks}).
 * A failure shrinks to the smallest program and prints it as the Java that replays it in
 * {@link MoneyPathRegressionTest}.
 *
 * <p>The seed is fixed, so {@code ./mvnw verify} checks the same programs every time; how many is
 * {@code jqwik.tries.default} (250 in {@code junit-platform.properties}); the soak command in BENCHMARKS.md
 * runs a hundred times more.
 */
class MoneyPathCheckTest {

    private static RedisServer redis;
    private static PostgresServer postgres;
    private static MoneySystem system;
    private static long programs;
    private static long steps;
    private static long started;
    /** The generated program that failed first (before shrinking), counted from 1; 0 when none did. */
    private static long firstFailure;

    @BeforeContainer
    static void start() {
        redis = RedisServer.start();
        postgres = PostgresServer.start();
        system = new MoneySystem(redis, postgres);
        started = System.nanoTime();
    }

    @AfterContainer
    static void stop() {
        System.out.printf("money path checker: %d programs, %d steps (%d executed with the end-of-program checks) in %d s%s%n",
                programs, steps, system == null ? 0 : system.executed(), (System.nanoTime() - started) / 1_000_000_000L,
                firstFailure == 0 ? "" : "; program " + firstFailure + " failed first, the rest were shrinking it");
        try (RedisServer r = redis; PostgresServer p = postgres) {
            if (system != null) {
                system.close();
            }
        }
    }

    @Property(seed = "20261202", shrinking = ShrinkingMode.FULL)
    void moneyStaysExact(@ForAll("programs") List<MoneyStep> program) {
        programs++;
        steps += program.size();
        try {
            system.check(program);
        } catch (AssertionError e) {
            if (firstFailure == 0) {
                firstFailure = programs;
            }
            throw new AssertionError(e.getMessage() + "\nreplay:\n" + MoneyStep.program(program), e);
        }
    }

    @Provide
    Arbitrary<List<MoneyStep>> programs() {
        return MoneyPrograms.programs();
    }
}
