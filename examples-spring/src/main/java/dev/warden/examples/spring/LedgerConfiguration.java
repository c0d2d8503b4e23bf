package dev.warden.examples.spring;

import dev.warden.lock.LockClient;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.LedgerListener;
import dev.warden.spring.QuotaSettings;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;

/**
 * The ledger inside the service: a journal consumer into H2 (PostgreSQL with a JDBC URL naming it), with
 * the starter's meters and the starter's lock client owning its partitions, so the ledger's health
 * ({@code wardenLedger}) and meters ({@code warden.ledger.*}) show next to the billing ones.
 */
@Configuration(proxyBeanMethods = false)
public class LedgerConfiguration {

    @Bean
    JdbcDataSource ledgerDataSource(@Value("${billing.ledger.jdbc-url:jdbc:h2:mem:ledger;DB_CLOSE_DELAY=-1}") String url) {
        JdbcDataSource ds = new JdbcDataSource();
        ds.setURL(url);
        Ledger.migrate(ds);
        return ds;
    }

    @Bean(destroyMethod = "close")
    LedgerConsumer ledgerConsumer(QuotaSettings settings, JdbcDataSource ledgerDataSource, LockClient locks,
                                  ObjectProvider<LedgerListener> meters) {
        return LedgerConsumer.builder(settings.asMap(), ledgerDataSource)
                .locks(locks)
                .listener(meters.getIfAvailable(() -> new LedgerListener() {
                }))
                .lagInterval(Duration.ofSeconds(1))
                .build()
                .start();
    }
}
