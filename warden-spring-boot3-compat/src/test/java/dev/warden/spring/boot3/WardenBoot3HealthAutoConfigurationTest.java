package dev.warden.spring.boot3;

import dev.warden.lock.LockClient;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.testkit.RedisServerExtension;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Boot 3.5's health auto-configuration on Boot 3.5 (this module's test class path is Spring Boot 3.5.7), against
 * testkit's Redis. The lock client, quota service and ledger consumer are the test's own beans: the starter,
 * which would make them, depends on this module.
 */
class WardenBoot3HealthAutoConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(WardenBoot3HealthAutoConfiguration.class));

    LockClient redisLocks() {
        return LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.namespace", "boot3-" + UUID.randomUUID(), "warden.lock.request-timeout", "300ms",
                "warden.lock.connect-timeout", "20s"));
    }

    Map<String, String> quotaSettings(String namespace) {
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        return Map.of("warden.quota.endpoint", redis.server().uri(), "warden.quota.namespace", namespace,
                "warden.quota.partitions", "2", "warden.quota.connect-timeout", "20s", "warden.lock.connect-timeout", "20s");
    }

    static void until(Duration deadline, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("within " + deadline + ": " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }

    @Test
    @DisplayName("lock and quota are UP against a running Redis; the lock goes DOWN while Redis is paused, UP after")
    void lockAndQuota() {
        runner.withBean(LockClient.class, this::redisLocks)
                .withBean(QuotaService.class, () -> QuotaService.create(quotaSettings("boot3-" + UUID.randomUUID())))
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    HealthIndicator lock = context.getBean("wardenLockHealthIndicator", HealthIndicator.class);
                    HealthIndicator quota = context.getBean("wardenQuotaHealthIndicator", HealthIndicator.class);
                    assertThat(lock.health().getStatus()).isEqualTo(Status.UP);
                    assertThat(lock.health().getDetails()).containsEntry("backend", "redis").containsKey("probeFencingToken");
                    assertThat(quota.health().getStatus()).isEqualTo(Status.UP);
                    assertThat(context).doesNotHaveBean("wardenLedgerHealthIndicator");

                    redis.server().pause();
                    try {
                        var down = lock.health();
                        assertThat(down.getStatus()).isEqualTo(Status.DOWN);
                        // The details written before the probe failed stay, with the failure.
                        assertThat(down.getDetails()).containsEntry("backend", "redis").containsKey("error");
                    } finally {
                        redis.server().resume();
                    }
                    until(Duration.ofSeconds(15), "UP again once the client has reconnected",
                            () -> lock.health().getStatus().equals(Status.UP));
                });
    }

    @Test
    @DisplayName("the ledger indicator appears with a LedgerConsumer bean, reports its backlog, and is DOWN once stopped")
    void ledger() {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL("jdbc:h2:mem:boot3-health-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
        Ledger.migrate(ds);
        Map<String, String> settings = quotaSettings("boot3-" + UUID.randomUUID().toString().substring(0, 8));
        runner.withBean(QuotaService.class, () -> QuotaService.create(settings))
                .withBean(LedgerConsumer.class, () -> LedgerConsumer.builder(settings, ds).blockTime(Duration.ofMillis(100))
                        .build().start(), definition -> definition.setDestroyMethodName("close"))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean("wardenLockHealthIndicator");
                    HealthIndicator ledger = context.getBean("wardenLedgerHealthIndicator", HealthIndicator.class);
                    var health = ledger.health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails()).containsEntry("backlog", 0L);
                    context.getBean(LedgerConsumer.class).stop();
                    assertThat(ledger.health().getStatus()).isEqualTo(Status.DOWN);
                });
    }

    @Test
    @DisplayName("management.health.warden-*.enabled=false switches each off; a bean of the same name wins")
    void switchedOffOrReplaced() {
        runner.withBean(LockClient.class, this::redisLocks)
                .withBean(QuotaService.class, () -> QuotaService.create(quotaSettings("boot3-" + UUID.randomUUID())))
                .withPropertyValues("management.health.warden-lock.enabled=false", "management.health.warden-quota.enabled=false")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("wardenLockHealthIndicator")
                        .doesNotHaveBean("wardenQuotaHealthIndicator"));
        HealthIndicator own = () -> org.springframework.boot.actuate.health.Health.up().build();
        runner.withBean(LockClient.class, this::redisLocks)
                .withBean("wardenLockHealthIndicator", HealthIndicator.class, () -> own)
                .run(context -> assertThat(context.getBean("wardenLockHealthIndicator")).isSameAs(own));
    }

    @Test
    @DisplayName("without Actuator (no Boot 3.5 health classes, as on Boot 4): nothing, and nothing fails")
    void withoutActuator() {
        runner.withBean(LockClient.class, this::redisLocks)
                .withClassLoader(new FilteredClassLoader(HealthIndicator.class))
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("wardenLockHealthIndicator"));
    }
}
