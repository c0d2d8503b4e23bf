package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.internal.KeyLayout;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The schema on PostgreSQL and H2, and the consumer's basics on H2 (the demo's embedded default). */
class LedgerSchemaTest {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension();
    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static long count(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Nested
    @DisplayName("on PostgreSQL")
    class OnPostgres {

        @Test
        @DisplayName("nothing exists until asked; createSchema is idempotent; the balance CHECK is in the database itself")
        void createdOnlyWhenAsked() {
            PostgresServer server = postgres.server();
            String schema = "s" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
            server.psql("CREATE SCHEMA " + schema);
            try (HikariDataSource ds = new HikariDataSource()) {
                ds.setJdbcUrl(server.jdbcUrl() + (server.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
                ds.setMaximumPoolSize(2);
                assertThatThrownBy(() -> Ledger.verifySchema(ds)).isInstanceOfSatisfying(QuotaException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.SCHEMA));
                Ledger.createSchema(ds);
                Ledger.createSchema(ds);
                Ledger.verifySchema(ds);
                assertThat(server.psql("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '" + schema + "'"))
                        .isEqualTo("4");
                assertThatThrownBy(() -> server.psql("INSERT INTO " + schema + ".ledger_accounts (account, balance) VALUES ('x', -1)"))
                        .hasMessageContaining("ledger_accounts_balance_non_negative");
            }
        }
    }

    @Nested
    @DisplayName("on H2")
    class OnH2 {

        @Test
        @DisplayName("createSchema is idempotent and verifySchema names missing tables")
        void schema() throws SQLException {
            DataSource ds = Support.h2();
            assertThatThrownBy(() -> Ledger.verifySchema(ds)).isInstanceOfSatisfying(QuotaException.class, e -> {
                assertThat(e.reason()).isEqualTo(QuotaException.Reason.SCHEMA);
                assertThat(e.getMessage()).contains("ledger_accounts", "ledger_quarantine");
            });
            Ledger.createSchema(ds);
            Ledger.createSchema(ds);
            Ledger.verifySchema(ds);
            assertThat(count(ds, "SELECT COUNT(*) FROM ledger_entries")).isZero();
            assertThat(Ledger.schemaStatements(Ledger.Dialect.H2)).hasSize(5);
        }

        @Test
        @DisplayName("the consumer applies entries, is idempotent on redelivery, and quarantines a forged over-deduction")
        void consumerBasics() throws SQLException {
            DataSource ds = Support.h2();
            Ledger.createSchema(ds);
            String a = "h-" + UUID.randomUUID();
            String b = JournalConsumerTest.neighbourOf(a);
            try (QuotaService quota = Support.quota(redis.server())) {
                try (LedgerConsumer c = Support.consumer(redis.server(), ds, "h2-" + UUID.randomUUID()).start()) {
                    quota.open(a, 100);
                    quota.open(b, 100);
                    quota.deduct(a, 30, "a1-" + a);
                    quota.topUp(b, 20, "b1-" + b);
                    Support.drained(c);
                }
                assertThat(count(ds, "SELECT balance FROM ledger_accounts WHERE account = '" + a + "'")).isEqualTo(70);
                assertThat(count(ds, "SELECT balance FROM ledger_accounts WHERE account = '" + b + "'")).isEqualTo(120);

                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.executeUpdate("UPDATE ledger_accounts SET balance = 1 WHERE account = '" + a + "'");
                }
                quota.deduct(a, 50, "a2-" + a);
                quota.deduct(b, 5, "b2-" + b);
                Support.Recorder recorder = new Support.Recorder();
                // A new group re-reads the whole journal: old entries are redeliveries, the forged one is refused.
                try (LedgerConsumer c = Support.consumer(redis.server(), ds, "h2-again").group("g-" + UUID.randomUUID())
                        .listener(recorder).start()) {
                    Support.drained(c);
                }
                assertThat(recorder.quarantined).filteredOn(q -> q.account().equals(a)).singleElement()
                        .satisfies(q -> assertThat(q.reason()).isEqualTo(QuarantineReason.NEGATIVE_BALANCE));
                assertThat(count(ds, "SELECT balance FROM ledger_accounts WHERE account = '" + b + "'")).isEqualTo(115);
                assertThat(count(ds, "SELECT COUNT(*) FROM ledger_quarantine WHERE account = '" + a + "'")).isEqualTo(1);
                assertThat(count(ds, "SELECT COUNT(*) FROM ledger_entries WHERE account IN ('" + a + "', '" + b + "')"))
                        .isEqualTo(5);
            }
        }

        @Test
        @DisplayName("no surprise DDL: a consumer on a database without the tables creates nothing and keeps the entries pending")
        void noSurpriseDdl() throws SQLException {
            DataSource ds = Support.h2();
            Support.Recorder recorder = new Support.Recorder();
            String a = "h-" + UUID.randomUUID();
            try (QuotaService quota = Support.quota(redis.server());
                 LedgerConsumer c = Support.consumer(redis.server(), ds, "h2-" + UUID.randomUUID())
                         .partitions(java.util.List.of(new KeyLayout(16).partition(a))).group("g-" + UUID.randomUUID())
                         .listener(recorder).start()) {
                quota.open(a, 10);
                Support.await("the consumer reported the database failure", () -> !recorder.databaseFailures.isEmpty());
                assertThat(c.backlog()).isPositive();
            }
            assertThatThrownBy(() -> Ledger.verifySchema(ds)).isInstanceOf(QuotaException.class);
        }
    }
}
