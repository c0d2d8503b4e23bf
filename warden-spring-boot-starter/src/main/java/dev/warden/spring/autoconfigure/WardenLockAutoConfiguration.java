package dev.warden.spring.autoconfigure;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import dev.warden.micrometer.MicrometerLockObserver;
import dev.warden.spring.internal.CompositeLockObserver;
import dev.warden.spring.internal.OnLockBackendCondition;
import dev.warden.spring.internal.Settings;
import dev.warden.spring.LeaderOnlyPostProcessor;
import dev.warden.spring.WithLockPostProcessor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A {@link LockClient} from {@code warden.lock.*} when a lock backend module is on the class path (or
 * {@code warden.lock.backend} names one), told of its leases by every {@link LockObserver} bean (meters
 * among them when the application has a {@link MeterRegistry}); closed with the context. And
 * {@link dev.warden.spring.WithLock} on beans' methods.
 */
@AutoConfiguration(afterName = {
        // After the MeterRegistry and ObservationRegistry exist: Boot 4's auto-configurations, then Boot 3.5's (a
        // name that is not on the class path is ignored).
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"})
@ConditionalOnClass(LockClient.class)
@EnableConfigurationProperties({WardenLockProperties.class, WardenMetricsProperties.class})
public class WardenLockAutoConfiguration {

    /** The names {@link WardenLockProperties} binds; everything else under the prefix goes to Warden as written. */
    static final List<String> BOUND = List.of("enabled", "backend", "endpoints", "namespace", "ttl", "connect-timeout",
            "request-timeout", "zookeeper.lost-on");

    /** Present even without a lock client: it refuses {@code @WithLock} methods that would otherwise run unlocked. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static WithLockPostProcessor wardenWithLockPostProcessor() {
        return new WithLockPostProcessor();
    }

    /** Present even without a lock client: it refuses {@code @LeaderOnly} methods that would otherwise never run. */
    @Bean
    @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
    static LeaderOnlyPostProcessor wardenLeaderOnlyPostProcessor() {
        return new LeaderOnlyPostProcessor();
    }

    /** Warden's lock settings from the bound properties, with Warden's keys. */
    static Map<String, Object> lockSettings(WardenLockProperties p, Environment environment) {
        return new Settings("warden.lock", BOUND)
                .put("backend", p.getBackend())
                .put("endpoints", p.getEndpoints().isEmpty() ? null : String.join(",", p.getEndpoints()))
                .put("namespace", p.getNamespace())
                .put("ttl", p.getTtl())
                .put("connect-timeout", p.getConnectTimeout())
                .put("request-timeout", p.getRequestTimeout())
                .put("zookeeper.lost-on", p.getZookeeper().getLostOn())
                .withUnbound(environment)
                .asMap();
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnBooleanProperty(name = "warden.lock.enabled", matchIfMissing = true)
    @Conditional(OnLockBackendCondition.class)
    static class LockClientConfiguration {

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean
        LockClient wardenLockClient(WardenLockProperties properties, Environment environment,
                                    ObjectProvider<LockObserver> observers) {
            return LockClient.create(lockSettings(properties, environment),
                    CompositeLockObserver.of(observers.orderedStream().toList()));
        }

        @Configuration(proxyBeanMethods = false)
        @ConditionalOnBean(MeterRegistry.class)
        @ConditionalOnBooleanProperty(name = "warden.metrics.enabled", matchIfMissing = true)
        static class LockMetricsConfiguration {

            @Bean
            @ConditionalOnMissingBean
            MicrometerLockObserver wardenLockMeters(MeterRegistry registry, WardenLockProperties lock,
                                                    WardenMetricsProperties metrics) {
                String backend = lock.getBackend() == null ? "none" : lock.getBackend().trim().toLowerCase(Locale.ROOT);
                return new MicrometerLockObserver(registry, Tags.of("backend", backend), metrics.lockNames());
            }
        }
    }
}
