package dev.warden.spring;

import dev.warden.lock.Lease;
import dev.warden.spring.autoconfigure.WardenLockAutoConfiguration;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code @WithPermit}, {@code @WithReadLock} and {@code @WithWriteLock} on beans, against a real Redis. */
class RecipeAnnotationsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    final String namespace = "recipes-" + UUID.randomUUID();

    ApplicationContextRunner runner(Class<?> configuration) {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(WardenLockAutoConfiguration.class))
                .withUserConfiguration(configuration)
                .withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                        "warden.lock.namespace=" + namespace, "warden.lock.connect-timeout=20s");
    }

    public static class Exports {

        // Read through methods: the bean is a CGLIB proxy whose own fields are never set.
        final AtomicInteger inside = new AtomicInteger();
        final AtomicInteger most = new AtomicInteger();

        public int inside() {
            return inside.get();
        }

        public int most() {
            return most.get();
        }

        @WithPermit(semaphore = "'exports'", permits = 2)
        public long export(CountDownLatch hold) throws InterruptedException {
            int now = inside.incrementAndGet();
            most.accumulateAndGet(now, Math::max);
            try {
                hold.await(10, TimeUnit.SECONDS);
                return CurrentLease.get().fencingToken();
            } finally {
                inside.decrementAndGet();
            }
        }

        @WithPermit(semaphore = "'exports'", permits = 2, take = 2, waitFor = "100ms", onTimeout = OnLockTimeout.SKIP)
        public Optional<String> exportAll() {
            return Optional.of("all");
        }

        @WithReadLock(name = "'table:' + #table")
        public String read(String table) {
            return CurrentLease.get().name();
        }

        @WithReadLock(name = "'table:' + #table")
        public void readThenWrite(String table, Exports self) {
            self.write(table);
        }

        @WithWriteLock(name = "'table:' + #table", waitFor = "200ms")
        public long write(String table) {
            return CurrentLease.get().fencingToken();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class ExportsConfiguration {
        @Bean
        Exports exports() {
            return new Exports();
        }
    }

    public static class TwoAnnotations {
        @WithLock(name = "'a'")
        @WithPermit(semaphore = "'a'", permits = 1)
        public void both() {
        }
    }

    public static class TakesTooMany {
        @WithPermit(semaphore = "'a'", permits = 2, take = 3)
        public void greedy() {
        }
    }

    @Test
    @DisplayName("@WithPermit: four concurrent calls hold at most 2 permits at once; a call for both skips while one is held")
    void permits() {
        runner(ExportsConfiguration.class).run(context -> {
            Exports exports = context.getBean(Exports.class);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                CountDownLatch hold = new CountDownLatch(1);
                List<Future<Long>> calls = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    calls.add(pool.submit(() -> exports.export(hold)));
                }
                Await.until(java.time.Duration.ofSeconds(10), "two calls inside", () -> exports.inside() == 2);
                assertThat(exports.exportAll()).as("a call for both permits while two are held").isEmpty();
                hold.countDown();
                for (Future<Long> call : calls) {
                    assertThat(call.get(20, TimeUnit.SECONDS)).isPositive();
                }
                assertThat(exports.most()).isEqualTo(2);
                assertThat(exports.exportAll()).contains("all");
            } finally {
                pool.shutdownNow();
            }
        });
    }

    @Test
    @DisplayName("@WithReadLock and @WithWriteLock: the sides of one read-write lock; a write inside a read fails rather than wait for itself")
    void readWrite() {
        runner(ExportsConfiguration.class).run(context -> {
            Exports exports = context.getBean(Exports.class);
            assertThat(exports.read("orders")).isEqualTo("rw:table:orders");
            assertThat(exports.write("orders")).isPositive();
            assertThatThrownBy(() -> exports.readThenWrite("orders", exports)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("read lock");
            assertThat(exports.write("orders")).as("nothing was left held").isPositive();
        });
    }

    @Test
    @DisplayName("two lock annotations on one method, or a call taking more permits than the count, fail the start-up")
    void mistakes() {
        runner(TwoAnnotationsConfiguration.class).run(context -> assertThat(WithLockTest.rootCause(context.getStartupFailure()))
                .hasMessageContaining("both @WithLock and @WithPermit"));
        runner(TakesTooManyConfiguration.class).run(context -> assertThat(WithLockTest.rootCause(context.getStartupFailure()))
                .hasMessageContaining("permits = 2, take = 3"));
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoAnnotationsConfiguration {
        @Bean
        TwoAnnotations twoAnnotations() {
            return new TwoAnnotations();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TakesTooManyConfiguration {
        @Bean
        TakesTooMany takesTooMany() {
            return new TakesTooMany();
        }
    }
}
