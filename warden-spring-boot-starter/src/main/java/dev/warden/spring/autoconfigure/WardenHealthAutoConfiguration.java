package dev.warden.spring.autoconfigure;

import dev.warden.lock.LockClient;
import dev.warden.micrometer.MeteredQuotaService;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.spring.internal.LedgerHealthIndicator;
import dev.warden.spring.internal.LockHealthIndicator;
import dev.warden.spring.internal.QuotaHealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Health indicators (with Actuator's health module): {@code wardenLock} (the backend grants a probe lock),
 * {@code wardenQuota} (the quota engine's Redis answers), {@code wardenLedger} (the application's
 * {@link LedgerConsumer} bean runs; its backlog). Each can be switched off with
 * {@code management.health.warden-lock.enabled=false} (and {@code warden-quota}, {@code warden-ledger}).
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
            return new LockHealthIndicator(locks);
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
            return new QuotaHealthIndicator(quota instanceof MeteredQuotaService m ? m.delegate() : quota);
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
            return new LedgerHealthIndicator(consumer);
        }
    }
}
