package dev.warden.quota.ledger;

import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.consume.LedgerListener;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.RedisServer;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * A namespace per test on a Redis the test class shares, so each database sees only its own
 * accounts: the engine, reconciler and consumers of one tenant, with the ledger tests' short timings.
 */
record Tenant(Map<String, Object> settings, KeyLayout layout) {

    static Tenant fresh(RedisServer server) {
        String ns = "t" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Object> settings = new HashMap<>(Support.settings(server));
        settings.put("warden.quota.namespace", ns);
        return new Tenant(settings, new KeyLayout(ns, 16));
    }

    QuotaService quota() {
        return QuotaService.create(settings);
    }

    Reconciler reconciler(DataSource ds) {
        return Reconciler.create(settings, ds);
    }

    LedgerConsumer consumer(DataSource ds) {
        return builder(ds).start();
    }

    LedgerConsumer consumer(DataSource ds, LedgerListener listener) {
        return builder(ds).listener(listener).start();
    }

    private LedgerConsumer.Builder builder(DataSource ds) {
        return LedgerConsumer.builder(settings, ds).consumerName("c-" + UUID.randomUUID()).batchSize(50)
                .blockTime(Duration.ofMillis(200)).sweepInterval(Duration.ofMillis(300))
                .rebalanceInterval(Duration.ofMillis(300)).retryBackoff(Duration.ofMillis(20), Duration.ofMillis(500))
                .lagInterval(Duration.ofMillis(500));
    }
}
