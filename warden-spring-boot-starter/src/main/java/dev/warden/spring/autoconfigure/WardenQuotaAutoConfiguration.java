package dev.warden.spring.autoconfigure;

import dev.warden.micrometer.MeteredQuotaService;
import dev.warden.micrometer.MicrometerLedgerListener;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.spring.QuotaSettings;
import dev.warden.spring.internal.Settings;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link QuotaService} from {@code warden.quota.*} (and {@code warden.lock.*} for its charges' lock) when
 * quota-core is on the class path; metered and observed when the application has a {@link MeterRegistry};
 * closed with the context. With quota-ledger and a registry, a {@link MicrometerLedgerListener} bean to hand
 * to the application's {@code LedgerConsumer}.
 */
@AutoConfiguration(after = WardenLockAutoConfiguration.class, afterName = {
        // After the registries, on Boot 4 and on Boot 3.5, as WardenLockAutoConfiguration.
        "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.metrics.CompositeMeterRegistryAutoConfiguration",
        "org.springframework.boot.actuate.autoconfigure.observation.ObservationAutoConfiguration"})
@ConditionalOnClass(QuotaService.class)
@ConditionalOnBooleanProperty(name = "warden.quota.enabled", matchIfMissing = true)
@EnableConfigurationProperties({WardenQuotaProperties.class, WardenLockProperties.class, WardenMetricsProperties.class})
public class WardenQuotaAutoConfiguration {

    static final List<String> BOUND = List.of("enabled", "endpoint", "namespace", "partitions", "idempotency-retention",
            "request-timeout", "connect-timeout", "allow-eviction", "lock", "lock-wait");

    @Bean
    @ConditionalOnMissingBean
    QuotaSettings wardenQuotaSettings(WardenQuotaProperties quota, WardenLockProperties lock, Environment environment) {
        Map<String, Object> settings = new LinkedHashMap<>(new Settings("warden.quota", BOUND)
                .put("endpoint", quota.getEndpoint())
                .put("namespace", quota.getNamespace())
                .put("partitions", quota.getPartitions())
                .put("idempotency-retention", quota.getIdempotencyRetention())
                .put("request-timeout", quota.getRequestTimeout())
                .put("connect-timeout", quota.getConnectTimeout())
                .put("allow-eviction", quota.getAllowEviction())
                .put("lock", quota.getLock())
                .put("lock-wait", quota.getLockWait())
                .withUnbound(environment)
                .asMap());
        settings.putAll(WardenLockAutoConfiguration.lockSettings(lock, environment));
        return new QuotaSettings(settings);
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    QuotaService wardenQuotaService(QuotaSettings settings, WardenMetricsProperties metrics,
                                    ObjectProvider<MeterRegistry> meters, ObjectProvider<ObservationRegistry> observations) {
        QuotaService quota = QuotaService.create(settings.asMap());
        MeterRegistry registry = metrics.isEnabled() ? meters.getIfAvailable() : null;
        if (registry == null) {
            return quota;
        }
        return new MeteredQuotaService(quota, registry, observations.getIfAvailable(() -> ObservationRegistry.NOOP),
                Tags.empty());
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LedgerListener.class)
    @ConditionalOnBean(MeterRegistry.class)
    @ConditionalOnBooleanProperty(name = "warden.metrics.enabled", matchIfMissing = true)
    static class LedgerMetricsConfiguration {

        @Bean
        @ConditionalOnMissingBean
        MicrometerLedgerListener wardenLedgerMeters(MeterRegistry registry) {
            return new MicrometerLedgerListener(registry, Tags.empty());
        }
    }
}
