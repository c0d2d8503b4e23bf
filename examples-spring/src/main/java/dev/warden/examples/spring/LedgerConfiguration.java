package dev.warden.examples.spring;

import dev.warden.lock.LockClient;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.spring.QuotaSettings;
import org.h2.jdbcx.JdbcDataSource;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;

/**
 * The ledger inside the service: a journal consumer into an embedded H2 database, with the starter's meters
 * and the starter's lock client owning its partitions, so the ledger's health ({@code wardenLedger}) and
 * meters ({@code warden.ledger.*}) show next to the billing ones.
 *
 * <p>The data source is H2's own {@link JdbcDataSource}, and the example brings only H2's driver: the database
 * is in memory by default ({@code jdbc:h2:mem:ledger}, gone when the service stops), and
 * {@code billing.ledger.jdbc-url} may name another H2 database, e.g. {@code jdbc:h2:file:./ledger} to
 * keep it across restarts. Any other URL fails the start-up. A production ledger runs on PostgreSQL: declare a
 * pooled PostgreSQL {@code DataSource} (and its driver) here instead; the consumer and {@link Ledger#migrate}
 * take any {@code javax.sql.DataSource}.
 */
@Configuration(proxyBeanMethods = false)
public class LedgerConfiguration {

    @Bean
    JdbcDataSource ledgerDataSource(@Value("${billing.ledger.jdbc-url:jdbc:h2:mem:ledger;DB_CLOSE_DELAY=-1}") String url) {
        if (!url.startsWith("jdbc:h2:")) {
            // Not echoed: a URL may carry a password.
            throw new IllegalArgumentException("billing.ledger.jdbc-url must be an H2 URL (jdbc:h2:...): "
                    + "this example's ledger data source is H2's JdbcDataSource");
        }
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
