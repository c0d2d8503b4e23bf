package dev.warden.examples.ledger;

import dev.warden.examples.Captured;
import dev.warden.examples.Settings;
import dev.warden.examples.charge.ChargeMerchant;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The copyable ledger sync, as a user runs it after some charges: a settings file naming a real Redis
 * (testkit's) and an H2 file database; the journal reaches the database, and reconciliation finds
 * Redis and the database agreeing, or names the account where they do not.
 */
class LedgerSyncTest {

    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    @Test
    @DisplayName("drains every charge into the ledger and reconciles clean: exit 0, balances equal")
    void drainsAndReconciles(@TempDir Path dir) throws Exception {
        String jdbcUrl = "jdbc:h2:file:" + dir.resolve("ledger").toAbsolutePath();
        String file = Settings.file(dir, "billing.properties", "warden.quota.endpoint=" + server.server().uri(),
                "warden.quota.namespace=sync", "warden.quota.lock=redis", "ledger.jdbc-url=" + jdbcUrl, Settings.PATIENT_QUOTA, Settings.PATIENT_LOCK);
        Captured out = new Captured();
        for (String[] charge : new String[][] {{"merchant-a", "5"}, {"merchant-a", "7"}, {"merchant-b", "2"}}) {
            assertThat(ChargeMerchant.run(new String[] {file, charge[0], charge[1]}, out.stream)).isZero();
        }

        int code = LedgerSync.run(new String[] {file}, out.stream);

        assertThat(code).as("output:%n%s", out).isZero();
        assertThat(out.text()).containsPattern("ledger schema at version \\d+")
                .containsPattern("journal drained: [1-9]\\d* entries applied in \\d+ batches, 0 quarantined; backlog 0")
                .contains("reconciliation: 2 accounts checked, 0 drifted, 0 entries not yet in the ledger,"
                        + " 0 unresolved quarantined: clean");
        assertThat(ledgerBalance(jdbcUrl, "merchant-a")).isEqualTo(ChargeMerchant.PLAN - 12);
        assertThat(ledgerBalance(jdbcUrl, "merchant-b")).isEqualTo(ChargeMerchant.PLAN - 2);
    }

    @Test
    @DisplayName("a ledger row changed behind the engine's back: the reconciliation names the account, exit 1")
    void findsDrift(@TempDir Path dir) throws Exception {
        String jdbcUrl = "jdbc:h2:file:" + dir.resolve("ledger").toAbsolutePath();
        String file = Settings.file(dir, "billing.properties", "warden.quota.endpoint=" + server.server().uri(),
                "warden.quota.namespace=drift", "warden.quota.lock=none", "ledger.jdbc-url=" + jdbcUrl, Settings.PATIENT_QUOTA, Settings.PATIENT_LOCK);
        Captured out = new Captured();
        assertThat(ChargeMerchant.run(new String[] {file, "merchant-c", "5"}, out.stream)).isZero();
        assertThat(LedgerSync.run(new String[] {file}, out.stream)).as("output:%n%s", out).isZero();
        try (Connection c = DriverManager.getConnection(jdbcUrl);
             PreparedStatement ps = c.prepareStatement("UPDATE ledger_accounts SET balance = balance + 1 WHERE account = ?")) {
            ps.setString(1, "merchant-c");
            assertThat(ps.executeUpdate()).isEqualTo(1);
        }

        int code = LedgerSync.run(new String[] {file}, out.stream);

        assertThat(code).as("output:%n%s", out).isEqualTo(1);
        assertThat(out.text()).contains("1 drifted", "NOT clean", "drift merchant-c: Redis 995, the ledger expects 996");
    }

    private static long ledgerBalance(String jdbcUrl, String account) throws SQLException {
        try (Connection c = DriverManager.getConnection(jdbcUrl);
             PreparedStatement ps = c.prepareStatement("SELECT balance FROM ledger_accounts WHERE account = ?")) {
            ps.setString(1, account);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).as("a ledger row for %s", account).isTrue();
                return rs.getLong(1);
            }
        }
    }
}
