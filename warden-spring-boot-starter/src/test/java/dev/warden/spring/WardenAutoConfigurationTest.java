package dev.warden.spring;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.etcd.EtcdLockProvider;
import dev.warden.lock.redis.RedisLockProvider;
import dev.warden.lock.zookeeper.ZooKeeperLockProvider;
import dev.warden.micrometer.MeteredQuotaService;
import dev.warden.micrometer.MicrometerLedgerListener;
import dev.warden.micrometer.MicrometerLockObserver;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.spring.autoconfigure.WardenEndpointAutoConfiguration;
import dev.warden.spring.autoconfigure.WardenHealthAutoConfiguration;
import dev.warden.spring.autoconfigure.WardenLockAutoConfiguration;
import dev.warden.spring.autoconfigure.WardenQuotaAutoConfiguration;
import dev.warden.spring.internal.LocksEndpoint;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.ZooKeeperServerExtension;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The auto-configurations against real servers (testkit's Redis and ZooKeeper), with modules present and absent. */
class WardenAutoConfigurationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    static final List<String> BACKENDS = List.of("lock-redis", "lock-etcd", "lock-zookeeper");

    final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(WardenLockAutoConfiguration.class, WardenQuotaAutoConfiguration.class,
                    WardenHealthAutoConfiguration.class))
            // Connecting is not what these tests check: a cold JVM on a loaded host once took over the 5 s default.
            .withPropertyValues("warden.quota.connect-timeout=20s", "warden.lock.connect-timeout=20s");

    String[] redisLock() {
        return new String[] {"warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                "warden.lock.namespace=boot-" + UUID.randomUUID(), "warden.quota.enabled=false",
                "warden.lock.connect-timeout=20s"}; // connecting is not what these tests check; a loaded host is slow
    }

    static Throwable rootCause(Throwable t) {
        Throwable c = t;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        return c;
    }

    @Nested
    @DisplayName("the lock client")
    class LockClientBean {

        @Test
        @DisplayName("from warden.lock.* with lock-redis present: a working client, closed with the context")
        void redisClient() {
            AtomicReference<LockClient> client = new AtomicReference<>();
            runner.withPropertyValues(redisLock()).run(context -> {
                assertThat(context).hasNotFailed().hasSingleBean(LockClient.class);
                LockClient locks = context.getBean(LockClient.class);
                assertThat(locks.backend()).isEqualTo("redis");
                try (Lease lease = locks.lock("merchant:1").acquire()) {
                    assertThat(lease.fencingToken()).isPositive();
                }
                client.set(locks);
            });
            assertThatThrownBy(() -> client.get().lock("merchant:1").acquire())
                    .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
        }

        @Test
        @DisplayName("relaxed binding: camelCase keys, indexed endpoints and environment variables reach Warden")
        void relaxedBinding() {
            runner.withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints[0]=" + redis.server().uri(),
                            "warden.lock.requestTimeout=2s", "warden.lock.connect_timeout=3s", "warden.quota.enabled=false")
                    .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockClient.class));
            // An environment variable is bound: its bad value comes back in Warden's message under Warden's key.
            runner.withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                            "warden.quota.enabled=false")
                    .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                            new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                                    Map.of("WARDEN_LOCK_TTL", "forever", "WARDEN_LOCK_CONNECT_TIMEOUT", "soon",
                                            "WARDEN_LOCK_MAX_HOLD_TIME", "never"))))
                    .run(context -> assertThat(rootCause(context.getStartupFailure()))
                            .hasMessageContaining("warden.lock.ttl")
                            .hasMessageContaining("warden.lock.connect-timeout")
                            // A setting no property binds arrives in Warden's own grammar for variables.
                            .hasMessageContaining("warden.lock.max-hold-time"));
            runner.withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                            "warden.quota.enabled=false")
                    .withInitializer(context -> context.getEnvironment().getPropertySources().addFirst(
                            new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
                                    Map.of("WARDEN_LOCK_REDIS__PASSWORD_ENV", "NO_SUCH_VARIABLE"))))
                    .run(context -> assertThat(rootCause(context.getStartupFailure()))
                            .hasMessageContaining("warden.lock.redis.password-env names the environment variable"
                                    + " NO_SUCH_VARIABLE"));
        }

        @Test
        @DisplayName("bad settings fail the start-up with Warden's one configuration message, every problem in it")
        void badSettings() {
            runner.withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                            "warden.lock.ttl=10 minutes", "warden.lock.namespace=not a namespace", "warden.lock.tll=30s",
                            "warden.quota.enabled=false")
                    .run(context -> {
                        assertThat(context).hasFailed();
                        assertThat(rootCause(context.getStartupFailure())).isInstanceOfSatisfying(LockException.class, e -> {
                            assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                            assertThat(e.getMessage()).startsWith("invalid lock configuration:")
                                    .contains("warden.lock.ttl").contains("warden.lock.namespace")
                                    .contains("unknown setting warden.lock.tll");
                        });
                    });
        }

        @Test
        @DisplayName("warden.lock.enabled=false: no client, no meters, no health indicator")
        void disabled() {
            runner.withPropertyValues("warden.lock.enabled=false", "warden.lock.backend=redis", "warden.quota.enabled=false")
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .run(context -> {
                        assertThat(context).hasNotFailed()
                                .doesNotHaveBean(LockClient.class)
                                .doesNotHaveBean(MicrometerLockObserver.class)
                                .doesNotHaveBean("wardenLockHealthIndicator");
                    });
        }
    }

    @Nested
    @DisplayName("backend modules present and absent")
    class BackendModules {

        @Test
        @DisplayName("no backend module and no backend named: no lock client, and nothing fails")
        void noBackendModule() {
            runner.withClassLoader(WithoutModules.of(BACKENDS, RedisLockProvider.class, EtcdLockProvider.class,
                            ZooKeeperLockProvider.class))
                    .withPropertyValues("warden.quota.enabled=false")
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LockClient.class));
        }

        @Test
        @DisplayName("a backend named whose module is absent: Warden's no-provider message, naming the module to add")
        void namedBackendAbsent() {
            runner.withClassLoader(WithoutModules.of(List.of("lock-redis"), RedisLockProvider.class))
                    .withPropertyValues(redisLock())
                    .run(context -> assertThat(rootCause(context.getStartupFailure()))
                            .isInstanceOfSatisfying(LockException.class, e -> {
                                assertThat(e.reason()).isEqualTo(LockException.Reason.NO_PROVIDER);
                                assertThat(e.getMessage()).contains("add the warden lock-redis module")
                                        .contains("found: ").contains("zookeeper");
                            }));
        }

        @Test
        @DisplayName("only lock-zookeeper present: the client runs on ZooKeeper")
        void onlyZooKeeper() {
            runner.withClassLoader(WithoutModules.of(List.of("lock-redis", "lock-etcd"), RedisLockProvider.class,
                            EtcdLockProvider.class))
                    .withPropertyValues("warden.lock.backend=zookeeper", "warden.lock.endpoints=" + zookeeper.server().endpoint(),
                            "warden.lock.zookeeper.lost-on=lost", "warden.quota.enabled=false")
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        LockClient locks = context.getBean(LockClient.class);
                        assertThat(locks.backend()).isEqualTo("zookeeper");
                        try (Lease lease = locks.lock("merchant:zk").acquire()) {
                            assertThat(lease.fencingToken()).isPositive();
                        }
                    });
        }

        @Test
        @DisplayName("quota-core absent: no quota service, no quota health, nothing fails")
        void quotaAbsent() {
            runner.withClassLoader(new FilteredClassLoader(QuotaService.class))
                    .withPropertyValues(redisLock())
                    .run(context -> assertThat(context).hasNotFailed().hasSingleBean(LockClient.class)
                            .doesNotHaveBean("wardenQuotaService").doesNotHaveBean("wardenQuotaHealthIndicator"));
        }
    }

    @Nested
    @DisplayName("the wardenlocks actuator endpoint")
    class LocksEndpointBean {

        final ApplicationContextRunner withEndpoint = runner.withConfiguration(
                AutoConfigurations.of(WardenEndpointAutoConfiguration.class));

        @Test
        @DisplayName("exposed: shows a lock's holder (null when free) and force-releases it by token; the holder is told FORCED")
        void exposed() {
            withEndpoint.withPropertyValues(redisLock())
                    .withPropertyValues("warden.lock.ttl=900ms", "management.endpoints.web.exposure.include=wardenlocks")
                    .run(context -> {
                        assertThat(context).hasNotFailed().hasSingleBean(LocksEndpoint.class);
                        LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
                        LockClient locks = context.getBean(LockClient.class);
                        Lease lease = locks.lock("job:hung").acquire();
                        AtomicReference<LeaseLost> lost = new AtomicReference<>();
                        lease.onLost(lost::set);
                        assertThat(endpoint.holder("job:hung")).containsEntry("token", lease.fencingToken());
                        assertThat(endpoint.holders()).singleElement().satisfies(h -> assertThat(h)
                                .containsEntry("name", "job:hung").containsEntry("token", lease.fencingToken()));
                        assertThat(endpoint.forceRelease("job:hung", lease.fencingToken() + 1, "ops", "wrong token"))
                                .containsEntry("released", false);
                        assertThat(endpoint.forceRelease("job:hung", lease.fencingToken(), "ops", "hung"))
                                .containsEntry("released", true);
                        Await.until(Duration.ofSeconds(5), "the holder is told", () -> lost.get() != null);
                        assertThat(lost.get().reason()).isEqualTo(LostReason.FORCED);
                        assertThat(endpoint.holder("job:hung")).isNull();
                    });
        }

        @Test
        @DisplayName("not exposed: no endpoint bean")
        void notExposed() {
            withEndpoint.withPropertyValues(redisLock())
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(LocksEndpoint.class));
        }
    }

    @Nested
    @DisplayName("the quota service")
    class QuotaServiceBean {

        @Test
        @DisplayName("from warden.quota.*, metered when the application has a MeterRegistry")
        void metered() {
            runner.withPropertyValues("warden.quota.endpoint=" + redis.server().uri(), "warden.quota.partitions=4",
                            "warden.lock.enabled=false")
                    .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        QuotaService quota = context.getBean(QuotaService.class);
                        assertThat(quota).isInstanceOf(MeteredQuotaService.class);
                        String account = "m-" + UUID.randomUUID();
                        assertThat(quota.open(account, 100)).isInstanceOf(Outcome.Applied.class);
                        assertThat(quota.deduct(account, 30, "r1")).isInstanceOf(Outcome.Applied.class);
                        assertThat(quota.deduct(account, 30, "r1")).isInstanceOf(Outcome.Duplicate.class);
                        MeterRegistry meters = context.getBean(MeterRegistry.class);
                        assertThat(meters.get(MeteredQuotaService.OUTCOMES).tag("operation", "deduct").tag("outcome", "applied")
                                .counter().count()).isEqualTo(1);
                        assertThat(context.getBean(QuotaSettings.class).asMap())
                                .containsEntry("warden.quota.endpoint", redis.server().uri())
                                .containsEntry("warden.quota.partitions", "4");
                        assertThat(context).hasSingleBean(MicrometerLedgerListener.class);
                    });
        }

        @Test
        @DisplayName("bad settings fail the start-up with Warden's one quota configuration message")
        void badSettings() {
            runner.withPropertyValues("warden.quota.endpoint=http://nowhere", "warden.quota.partitions=many",
                            "warden.quota.lock-wait=a while", "warden.lock.enabled=false")
                    .run(context -> assertThat(rootCause(context.getStartupFailure()))
                            .isInstanceOfSatisfying(QuotaException.class, e -> {
                                assertThat(e.reason()).isEqualTo(QuotaException.Reason.CONFIGURATION);
                                assertThat(e.getMessage()).startsWith("invalid quota configuration:")
                                        .contains("warden.quota.endpoint").contains("warden.quota.partitions")
                                        .contains("warden.quota.lock-wait");
                            }));
        }

        @Test
        @DisplayName("warden.quota.enabled=false: no quota service, settings or health indicator")
        void disabled() {
            runner.withPropertyValues("warden.quota.enabled=false", "warden.lock.enabled=false")
                    .run(context -> assertThat(context).hasNotFailed()
                            .doesNotHaveBean(QuotaService.class)
                            .doesNotHaveBean(QuotaSettings.class)
                            .doesNotHaveBean("wardenQuotaHealthIndicator"));
        }
    }

    @Nested
    @DisplayName("health indicators")
    class Health {

        @Test
        @DisplayName("lock and quota are UP against a running Redis; the lock goes DOWN while Redis is paused")
        void lockAndQuota() {
            runner.withPropertyValues("warden.lock.backend=redis", "warden.lock.endpoints=" + redis.server().uri(),
                            "warden.lock.request-timeout=300ms", "warden.quota.endpoint=" + redis.server().uri())
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        HealthIndicator lock = context.getBean("wardenLockHealthIndicator", HealthIndicator.class);
                        HealthIndicator quota = context.getBean("wardenQuotaHealthIndicator", HealthIndicator.class);
                        assertThat(lock.health().getStatus()).isEqualTo(Status.UP);
                        assertThat(lock.health().getDetails()).containsEntry("backend", "redis").containsKey("probeFencingToken");
                        assertThat(quota.health().getStatus()).isEqualTo(Status.UP);

                        redis.server().pause();
                        try {
                            assertThat(lock.health().getStatus()).isEqualTo(Status.DOWN);
                        } finally {
                            redis.server().resume();
                        }
                        Await.until(Duration.ofSeconds(15), "UP again once the client has reconnected",
                                () -> lock.health().getStatus().equals(Status.UP));
                    });
        }

        @Test
        @DisplayName("the ledger indicator appears with a LedgerConsumer bean and reports its backlog")
        void ledger() {
            JdbcDataSource ds = new JdbcDataSource();
            ds.setURL("jdbc:h2:mem:health-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
            Ledger.migrate(ds);
            String namespace = "health-" + UUID.randomUUID().toString().substring(0, 8);
            runner.withPropertyValues("warden.quota.endpoint=" + redis.server().uri(), "warden.lock.enabled=false")
                    .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("wardenLedgerHealthIndicator"));
            runner.withPropertyValues("warden.quota.endpoint=" + redis.server().uri(), "warden.quota.namespace=" + namespace,
                            "warden.quota.partitions=2", "warden.lock.enabled=false")
                    .withUserConfiguration(LedgerConfiguration.class)
                    .withBean(JdbcDataSource.class, () -> ds)
                    .run(context -> {
                        assertThat(context).hasNotFailed();
                        HealthIndicator ledger = context.getBean("wardenLedgerHealthIndicator", HealthIndicator.class);
                        var health = ledger.health();
                        assertThat(health.getStatus()).isEqualTo(Status.UP);
                        assertThat(health.getDetails()).containsEntry("backlog", 0L);
                        context.getBean(LedgerConsumer.class).stop();
                        assertThat(ledger.health().getStatus()).isEqualTo(Status.DOWN);
                    });
        }
    }

    @org.springframework.context.annotation.Configuration(proxyBeanMethods = false)
    static class LedgerConfiguration {
        @org.springframework.context.annotation.Bean(destroyMethod = "close")
        LedgerConsumer ledgerConsumer(QuotaSettings settings, JdbcDataSource ds) {
            return LedgerConsumer.builder(settings.asMap(), ds).blockTime(Duration.ofMillis(100)).build().start();
        }
    }
}
