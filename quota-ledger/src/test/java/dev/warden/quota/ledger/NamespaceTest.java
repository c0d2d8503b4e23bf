package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Two tenants share one Redis through warden.quota.namespace without seeing each other. */
class NamespaceTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    static Map<String, Object> tenant(RedisServer server, String namespace) {
        Map<String, Object> s = Support.settings(server);
        s.put("warden.quota.namespace", namespace);
        return s;
    }

    @SuppressWarnings("unchecked")
    static List<String> keys(RedisServer server, String pattern) {
        return (List<String>) server.command("KEYS", pattern);
    }

    @Test
    @DisplayName("the same account id in two namespaces: separate keys, journals, consumers, ledgers and reconciliations")
    void tenantsApart() {
        RedisServer server = redis.server();
        String a = "tenant-a-" + UUID.randomUUID().toString().substring(0, 8);
        String b = "tenant-b-" + UUID.randomUUID().toString().substring(0, 8);
        Map<String, Object> settingsA = tenant(server, a);
        Map<String, Object> settingsB = tenant(server, b);
        String account = "merchant-42";
        try (HikariDataSource dsA = Support.freshPostgres(postgres.server());
             HikariDataSource dsB = Support.freshPostgres(postgres.server());
             QuotaService quotaA = QuotaService.create(settingsA);
             QuotaService quotaB = QuotaService.create(settingsB)) {
            assertThat(quotaA.open(account, 1_000).isApplied()).isTrue();
            assertThat(quotaB.open(account, 5_000).isApplied()).as("the same id in another namespace is another account").isTrue();
            assertThat(quotaA.deduct(account, 100, "order-1").isApplied()).isTrue();
            assertThat(quotaB.deduct(account, 300, "order-1").isApplied()).isTrue();
            assertThat(quotaA.balance(account)).hasValue(900);
            assertThat(quotaB.balance(account)).hasValue(4_700);
            assertThat(keys(server, "quota:*")).as("nothing outside the namespaces").isEmpty();
            assertThat(keys(server, a + ":quota:*")).contains(new KeyLayout(a, 16).accountKey(account));

            try (LedgerConsumer ca = LedgerConsumer.builder(settingsA, dsA).consumerName("a").build().start();
                 LedgerConsumer cb = LedgerConsumer.builder(settingsB, dsB).consumerName("b").build().start()) {
                Support.drained(ca);
                Support.drained(cb);
                Support.await("each tenant's consumer owns its own 16 partitions",
                        () -> ca.partitions().size() == 16 && cb.partitions().size() == 16);
            }
            assertThat(count(dsA, "SELECT balance FROM ledger_accounts WHERE account = '" + account + "'")).isEqualTo(900);
            assertThat(count(dsB, "SELECT balance FROM ledger_accounts WHERE account = '" + account + "'")).isEqualTo(4_700);
            assertThat(count(dsA, "SELECT COUNT(*) FROM ledger_entries")).isEqualTo(2);

            server.command("HSET", new KeyLayout(b, 16).accountKey(account), "balance", "1");
            try (Reconciler ra = Reconciler.create(settingsA, dsA); Reconciler rb = Reconciler.create(settingsB, dsB)) {
                ReconciliationReport reportA = ra.check();
                ReconciliationReport reportB = rb.check();
                assertThat(reportA.clean()).isTrue();
                assertThat(reportA.accountsChecked()).isEqualTo(1);
                assertThat(reportB.drifted()).singleElement().satisfies(d -> {
                    assertThat(d.account()).isEqualTo(account);
                    assertThat(d.redisBalance()).hasValue(1);
                    assertThat(d.databaseBalance()).hasValue(4_700);
                });
            }
        }
    }

    static long count(javax.sql.DataSource ds, String sql) {
        try (java.sql.Connection c = ds.getConnection(); java.sql.Statement s = c.createStatement();
             java.sql.ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }
}
