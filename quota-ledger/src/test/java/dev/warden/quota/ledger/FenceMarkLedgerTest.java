package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaService;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An account's fence mark persisted by the ledger on both dialects: a batch without a fenced change keeps it
 * (H2's GREATEST answers NULL for a NULL argument, PostgreSQL's ignores it), and bootstrap brings it back, so a
 * holder superseded before Redis lost its data is still refused after.
 */
class FenceMarkLedgerTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();
    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    @Test
    @DisplayName("PostgreSQL: the fence mark survives unfenced batches and a data loss")
    void onPostgres() throws SQLException {
        try (HikariDataSource pg = Support.freshPostgres(postgres.server())) {
            survives(pg);
        }
    }

    @Test
    @DisplayName("H2: the same")
    void onH2() throws SQLException {
        DataSource h2 = Support.h2();
        Ledger.migrate(h2);
        survives(h2);
    }

    private void survives(DataSource ds) throws SQLException {
        Tenant t = Tenant.fresh(redis.server());
        String account = "fenced-" + UUID.randomUUID();
        try (QuotaService quota = t.quota(); Reconciler reconciler = t.reconciler(ds)) {
            String lock = quota.lockName(account);
            assertThat(quota.open(account, 1_000).isApplied()).isTrue();
            assertThat(quota.deduct(account, 10, "f1", new BelievedLease(lock, 7)).isApplied()).isTrue();
            drain(t, ds);
            assertThat(fence(ds, account)).isEqualTo(7L);

            // A batch of unfenced changes only: the mark stays.
            assertThat(quota.deduct(account, 10, "u1").isApplied()).isTrue();
            assertThat(quota.refund(account, 5, "u2").isApplied()).isTrue();
            drain(t, ds);
            assertThat(fence(ds, account)).isEqualTo(7L);

            // Redis loses the tenant's data; bootstrap restores the mark with the balance.
            List<?> keys = (List<?>) redis.server().command("KEYS", t.layout().prefix() + "*");
            for (Object k : keys) {
                redis.server().command("DEL", String.valueOf(k));
            }
            reconciler.bootstrap();
            assertThat(quota.balance(account)).hasValue(985);
            assertThat(quota.deduct(account, 10, "s1", new BelievedLease(lock, 5))).isEqualTo(new Outcome.StaleFence(5, 7));
            assertThat(quota.deduct(account, 10, "f2", new BelievedLease(lock, 8)).isApplied()).isTrue();
            drain(t, ds);
            assertThat(fence(ds, account)).isEqualTo(8L);
            assertThat(reconciler.check().clean()).isTrue();
        }
    }

    private static void drain(Tenant t, DataSource ds) {
        try (LedgerConsumer c = t.consumer(ds)) {
            Support.drained(c);
        }
    }

    private static Long fence(DataSource ds, String account) throws SQLException {
        try (Connection c = ds.getConnection();
             PreparedStatement ps = c.prepareStatement("SELECT fence FROM ledger_accounts WHERE account = ?")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("a ledger row for %s", account).isTrue();
                long v = rs.getLong(1);
                return rs.wasNull() ? null : v;
            }
        }
    }
}
