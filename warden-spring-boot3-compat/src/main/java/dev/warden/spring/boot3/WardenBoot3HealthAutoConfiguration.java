package dev.warden.spring.boot3;

import dev.warden.lock.LockClient;
import dev.warden.micrometer.MeteredQuotaService;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.spring.probe.LedgerProbe;
import dev.warden.spring.probe.LockProbe;
import dev.warden.spring.probe.QuotaProbe;
import org.springframework.boot.actuate.autoconfigure.health.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot 3.5's health indicators for Warden (with Actuator): {@code wardenLock}, {@code wardenQuota},
 * {@code wardenLedger}, the same probes and switches ({@code management.health.warden-lock.enabled=false}, and
 * {@code warden-quota}, {@code warden-ledger}) as the starter's Boot 4 {@code WardenHealthAutoConfiguration}.
 * Boot 4 has no {@code org.springframework.boot.actuate.health} package, so there this configuration is dropped
 * before its class is read, and Boot 4's own one applies.
 */
@AutoConfiguration(afterName = {"dev.warden.spring.autoconfigure.WardenLockAutoConfiguration",
        "dev.warden.spring.autoconfigure.WardenQuotaAutoConfiguration"})
@ConditionalOnClass({HealthIndicator.class, HealthContributorAutoConfiguration.class})
public class WardenBoot3HealthAutoConfiguration {

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
