package dev.warden.spring.autoconfigure;

import dev.warden.lock.LockClient;
import dev.warden.micrometer.MeteredQuotaService;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.spring.internal.ProbeHealthIndicator;
import dev.warden.spring.probe.LedgerProbe;
import dev.warden.spring.probe.LockProbe;
import dev.warden.spring.probe.QuotaProbe;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot 4's health indicators (with Actuator's health module, {@code spring-boot-health}):
 * {@code wardenLock} (the backend grants a probe lock), {@code wardenQuota} (the quota engine's Redis answers),
 * {@code wardenLedger} (the application's {@link LedgerConsumer} bean runs; its backlog). Each can be switched off with
 * {@code management.health.warden-lock.enabled=false} (and {@code warden-quota}, {@code warden-ledger}).
 * On Boot 3.5 this configuration is dropped (its health classes are not there) and
 * {@code dev.warden.spring.boot3.WardenBoot3HealthAutoConfiguration} gives the same indicators.
 */
@AutoConfiguration(after = {WardenLockAutoConfiguration.class, WardenQuotaAutoConfiguration.class})
@ConditionalOnClass(HealthIndicator.class)
public class WardenHealthAutoConfiguration {

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LockClient.class)
    @ConditionalOnBean(LockClient.class)
    @ConditionalOnEnabledHealthIndicator("warden-lock")
    static class LockHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "wardenLockHealthIndicator")
        HealthIndicator wardenLockHealthIndicator(LockClient locks) {
            return new ProbeHealthIndicator(LockProbe.FAILURE, report -> LockProbe.check(locks, report));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(QuotaService.class)
    @ConditionalOnBean(QuotaService.class)
    @ConditionalOnEnabledHealthIndicator("warden-quota")
    static class QuotaHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "wardenQuotaHealthIndicator")
        HealthIndicator wardenQuotaHealthIndicator(QuotaService quota) {
            // Probes are not traffic: the unmetered service answers them.
            QuotaService probed = quota instanceof MeteredQuotaService m ? m.delegate() : quota;
            return new ProbeHealthIndicator(QuotaProbe.FAILURE, report -> QuotaProbe.check(probed, report));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LedgerConsumer.class)
    @ConditionalOnBean(LedgerConsumer.class)
    @ConditionalOnEnabledHealthIndicator("warden-ledger")
    static class LedgerHealthConfiguration {

        @Bean
        @ConditionalOnMissingBean(name = "wardenLedgerHealthIndicator")
        HealthIndicator wardenLedgerHealthIndicator(LedgerConsumer consumer) {
            return new ProbeHealthIndicator(LedgerProbe.FAILURE, report -> LedgerProbe.check(consumer, report));
        }
    }
}
