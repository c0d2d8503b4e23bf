package dev.warden.spring;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.spring.autoconfigure.WardenLockAutoConfiguration;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code @WithLock} on beans, against a real Redis: names, leases, timeouts, and the mistakes that fail start-up. */
class WithLockTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    final String namespace = "withlock-" + UUID.randomUUID();

    ApplicationContextRunner runner(Class<?> configuration) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(WardenLockAutoConfiguration.class))
                .withUserConfiguration(configuration)
                .withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                        "warden.lock.namespace=" + namespace, "billing.wait=150ms", "warden.lock.connect-timeout=20s");
    }

    static Throwable rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    public static class Billing {

        @WithLock(name = "'merchant:' + #merchantId", waitFor = "${billing.wait}")
        public Lease charge(String merchantId) {
            Lease lease = CurrentLease.get();
            assertThat(lease.isValid()).isTrue();
            return lease;
        }

        @WithLock(name = "'merchant:' + #p0", waitFor = "100ms", onTimeout = OnLockTimeout.SKIP)
        public Optional<String> report(String merchantId) {
            return Optional.of("report of " + merchantId);
        }

        @WithLock(name = "'nightly'", waitFor = "0s", onTimeout = OnLockTimeout.SKIP)
        public String nightly() {
            return "ran";
        }

        @WithLock(name = "'outer:' + #id")
        public long nested(String id) {
            long outer = CurrentLease.get().fencingToken();
            assertThat(inner(id).name()).isEqualTo("outer:" + id);
            return outer;
        }

        // Not through the proxy: no lock of its own, and the outer lease stays current.
        Lease inner(String id) {
            return CurrentLease.get();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class BillingConfiguration {
        @Bean
        Billing billing() {
            return new Billing();
        }
    }

    @Nested
    @DisplayName("at run time")
    class AtRunTime {

        @Test
        @DisplayName("the lock is named by SpEL over the arguments; its lease, with a fencing token, is current inside only")
        void leaseInside() {
            runner(BillingConfiguration.class).run(context -> {
                Billing billing = context.getBean(Billing.class);
                Lease first = billing.charge("42");
                Lease second = billing.charge("42");
                assertThat(first.name()).isEqualTo("merchant:42");
                assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
                assertThat(first.isValid()).as("released after the call").isFalse();
                assertThat(CurrentLease.find()).isEmpty();
                assertThatThrownBy(CurrentLease::get).isInstanceOf(IllegalStateException.class);
                assertThat(billing.nested("7")).isPositive();
            });
        }

        @Test
        @DisplayName("THROW: a wait that runs out throws LockTimeoutException (reason TIMEOUT) and the method does not run")
        void timeoutThrows() {
            runner(BillingConfiguration.class).run(context -> {
                Billing billing = context.getBean(Billing.class);
                try (LockClient other = LockClient.create(java.util.Map.of("warden.lock.backend", "redis",
                        "warden.lock.endpoints", redis.server().uri(), "warden.lock.namespace", namespace,
                        "warden.lock.connect-timeout", "20s"));
                     Lease held = other.lock("merchant:43").acquire()) {
                    assertThatThrownBy(() -> billing.charge("43"))
                            .isInstanceOfSatisfying(LockTimeoutException.class, e -> {
                                assertThat(e.reason()).isEqualTo(LockException.Reason.TIMEOUT);
                                assertThat(e.lockName()).isEqualTo("merchant:43");
                                assertThat(e.getMessage()).contains("150 ms").contains("Billing.charge did not run");
                            });
                    assertThat(billing.report("43")).as("SKIP with Optional").isEmpty();
                    assertThat(CurrentLease.find()).isEmpty();
                }
                assertThat(billing.report("43")).contains("report of 43");
            });
        }

        @Test
        @DisplayName("SKIP: an object-returning method held elsewhere returns null without running")
        void skipReturnsNull() {
            runner(BillingConfiguration.class).run(context -> {
                Billing billing = context.getBean(Billing.class);
                try (LockClient other = LockClient.create(java.util.Map.of("warden.lock.backend", "redis",
                        "warden.lock.endpoints", redis.server().uri(), "warden.lock.namespace", namespace,
                        "warden.lock.connect-timeout", "20s"));
                     Lease held = other.lock("nightly").acquire()) {
                    assertThat(billing.nightly()).isNull();
                }
                assertThat(billing.nightly()).isEqualTo("ran");
            });
        }
    }

    public static class SkipOnPrimitive {
        @WithLock(name = "'x'", waitFor = "1s", onTimeout = OnLockTimeout.SKIP)
        public int count() {
            return 1;
        }
    }

    public static class BadExpression {
        @WithLock(name = "'merchant:' + ")
        public void run() {
        }
    }

    public static class BadWait {
        @WithLock(name = "'x'", waitFor = "two seconds")
        public void run() {
        }
    }

    public static class AsyncResult {
        @WithLock(name = "'x'")
        public CompletableFuture<String> run() {
            return CompletableFuture.completedFuture("x");
        }
    }

    @Nested
    @DisplayName("mistakes fail the start-up, naming the method")
    class AtStartUp {

        void failsWith(Class<?> bean, String message) {
            runner(Object.class).withBean(bean).run(context -> {
                assertThat(context).hasFailed();
                // The start-up failure's chain names the method and the mistake.
                assertThat(context.getStartupFailure()).hasStackTraceContaining(message)
                        .hasStackTraceContaining("@WithLock method " + bean.getSimpleName());
            });
        }

        @Test
        @DisplayName("SKIP on a primitive return type")
        void skipOnPrimitive() {
            failsWith(SkipOnPrimitive.class, "no empty value for onTimeout = SKIP");
        }

        @Test
        @DisplayName("a name that is not a SpEL expression")
        void badExpression() {
            failsWith(BadExpression.class, "is not a SpEL expression");
        }

        @Test
        @DisplayName("a wait that is not a duration")
        void badWait() {
            failsWith(BadWait.class, "waitFor 'two seconds' is not a duration");
        }

        @Test
        @DisplayName("an asynchronous result, whose work would outlive the lock")
        void asyncResult() {
            failsWith(AsyncResult.class, "its work would outlive it");
        }

        @Test
        @DisplayName("@WithLock without a lock client (warden.lock.enabled=false) refuses to run unlocked")
        void noLockClient() {
            runner(BillingConfiguration.class).withPropertyValues("warden.lock.enabled=false").run(context -> {
                assertThat(context).hasFailed();
                assertThat(rootCause(context.getStartupFailure())).hasMessageContaining("needs a LockClient bean");
            });
        }
    }
}
