package dev.warden.spring;

import dev.warden.lock.LockClient;
import dev.warden.spring.autoconfigure.WardenLockAutoConfiguration;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code @LeaderOnly} across two application contexts on one real Redis: one runs the job, the other takes over. */
class LeaderOnlyTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    final String namespace = "leaderonly-" + UUID.randomUUID();

    ApplicationContextRunner runner(Class<?> configuration) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(WardenLockAutoConfiguration.class))
                .withUserConfiguration(configuration)
                .withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                        "warden.lock.namespace=" + namespace, "warden.lock.ttl=900ms", "warden.lock.connect-timeout=20s",
                        "jobs.election=settlement");
    }

    public static class Settlement {
        private final List<Long> terms = new CopyOnWriteArrayList<>();

        /** Through the proxy: a field read on it would be the proxy's own. */
        public List<Long> terms() {
            return terms;
        }

        @LeaderOnly("${jobs.election}")
        public void run() {
            terms.add(CurrentLease.get().fencingToken());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Jobs {
        @Bean
        Settlement settlement() {
            return new Settlement();
        }
    }

    public static class Wrong {
        @LeaderOnly("x")
        public String report() {
            return "report";
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class WrongJobs {
        @Bean
        Wrong wrong() {
            return new Wrong();
        }
    }

    private static void await(Duration deadline, String what, java.util.function.BooleanSupplier condition) {
        Await.until(deadline, what, condition);
    }

    @Test
    @DisplayName("of two instances only the leader runs the job (its term is CurrentLease's token); when it closes the other runs it in a higher term")
    void oneInstanceRuns() {
        runner(Jobs.class).withPropertyValues("warden.election.candidate-id=first").run(a -> {
            Settlement one = a.getBean(Settlement.class);
            await(Duration.ofSeconds(5), "the first instance leads", () -> {
                one.run();
                return !one.terms().isEmpty();
            });
            runner(Jobs.class).withPropertyValues("warden.election.candidate-id=second").run(b -> {
                Settlement two = b.getBean(Settlement.class);
                for (int i = 0; i < 5; i++) {
                    two.run();
                }
                assertThat(two.terms()).as("runs on the instance that does not lead").isEmpty();
                assertThat(a.getBean(LockClient.class).election("settlement").leader()).hasValueSatisfying(
                        l -> assertThat(l.candidateId()).isEqualTo("first"));
                long firstTerm = one.terms().get(0);
                a.close();
                await(Duration.ofSeconds(5), "the second instance leads once the first closed", () -> {
                    two.run();
                    return !two.terms().isEmpty();
                });
                assertThat(two.terms().get(0)).isGreaterThan(firstTerm);
            });
        });
    }

    @Test
    @DisplayName("a @LeaderOnly method that returns a value fails the start-up, naming it")
    void nonVoidRefused() {
        runner(WrongJobs.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("Wrong.report")
                    .hasMessageContaining("must return void");
        });
    }
}
