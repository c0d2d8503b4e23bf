package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.internal.store.Schema;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.KeyLayout;
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
import java.util.List;
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

    /** The first release's one-shot schema script (migration 1 is that script), applied by hand. */
    static void legacySchema(DataSource ds, Dialect dialect) throws SQLException {
        String sql = Ledger.schemaSql(dialect);
        sql = sql.substring(0, sql.indexOf("-- V2__"));
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            StringBuilder current = new StringBuilder();
            for (String line : sql.split("\n")) {
                if (line.strip().startsWith("--") || line.isBlank()) {
                    continue;
                }
                current.append(line).append('\n');
                if (line.strip().endsWith(";")) {
                    s.execute(current.substring(0, current.lastIndexOf(";")));
                    current.setLength(0);
                }
            }
        }
    }

    /** Rows as the first release wrote them: openings keyed 'open:<account>', request ids unique across accounts. */
    static void legacyRows(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO ledger_accounts (account, balance) VALUES ('m-1', 70), ('m-2', 100)");
            s.executeUpdate("INSERT INTO ledger_entries (request_id, account, kind, amount, balance_after, token, stream,"
                    + " entry_id, entry_ms, entry_seq) VALUES"
                    + " ('open:m-1', 'm-1', 'open', 100, 100, NULL, 'quota:{p1}:journal', '1-0', 1, 0),"
                    + " ('open:m-2', 'm-2', 'open', 100, 100, NULL, 'quota:{p2}:journal', '1-0', 1, 0),"
                    + " ('order-9', 'm-1', 'deduct', 30, 70, NULL, 'quota:{p1}:journal', '2-0', 2, 0)");
        }
    }

    /** After migration: the rows are kept, openings carry the empty request id, and another account may reuse 'order-9'. */
    static void assertMigrated(DataSource ds) throws SQLException {
        Ledger.verifySchema(ds);
        assertThat(count(ds, "SELECT COUNT(*) FROM ledger_entries")).isEqualTo(3);
        assertThat(count(ds, "SELECT COUNT(*) FROM ledger_entries WHERE kind = 'open' AND request_id = ''")).isEqualTo(2);
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO ledger_entries (request_id, account, kind, amount, balance_after, token, stream,"
                    + " entry_id, entry_ms, entry_seq) VALUES ('order-9', 'm-2', 'deduct', 5, 95, NULL,"
                    + " 'tenant-a:quota:{p2}:journal', '3-0', 3, 0)");
            assertThatThrownBy(() -> s.executeUpdate("INSERT INTO ledger_entries (request_id, account, kind, amount,"
                    + " balance_after, token, stream, entry_id, entry_ms, entry_seq) VALUES ('order-9', 'm-2', 'deduct', 5,"
                    + " 90, NULL, 'quota:{p2}:journal', '4-0', 4, 0)")).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).startsWith("23"));
        }
        assertThat(count(ds, "SELECT COUNT(*) FROM ledger_partitions")).isZero();
    }

    @Test
    @DisplayName("the migration folders hold exactly the migrations Ledger lists: the shared ones, then each dialect's")
    void migrationsListed() throws Exception {
        List<String> common = files("common");
        assertThat(common).containsExactlyElementsOf(Schema.COMMON);
        for (Dialect d : Dialect.values()) {
            List<String> all = new java.util.ArrayList<>(common);
            all.addAll(files(d.name().toLowerCase(java.util.Locale.ROOT)));
            assertThat(all.stream().sorted()).as(d.name()).containsExactlyElementsOf(Schema.MIGRATIONS);
        }
    }

    static List<String> files(String folder) throws Exception {
        java.net.URL dir = Ledger.class.getResource("/dev/warden/quota/ledger/migration/" + folder);
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.list(java.nio.file.Path.of(dir.toURI()))) {
            return files.map(f -> f.getFileName().toString()).sorted().toList();
        }
    }

    static HikariDataSource freshSchema(PostgresServer server) {
        String schema = "s" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        server.psql("CREATE SCHEMA " + schema);
        HikariDataSource ds = new HikariDataSource();
        ds.setJdbcUrl(server.jdbcUrl() + (server.jdbcUrl().contains("?") ? "&" : "?") + "currentSchema=" + schema);
        ds.setMaximumPoolSize(2);
        return ds;
    }

    @Nested
    @DisplayName("on PostgreSQL")
    class OnPostgres {

        @Test
        @DisplayName("nothing exists until asked; migrate is idempotent and records its versions; the balance CHECK is in the database itself")
        void createdOnlyWhenAsked() {
            PostgresServer server = postgres.server();
            try (HikariDataSource ds = freshSchema(server)) {
                String schema = ds.getJdbcUrl().substring(ds.getJdbcUrl().indexOf("currentSchema=") + 14);
                assertThatThrownBy(() -> Ledger.verifySchema(ds)).isInstanceOfSatisfying(QuotaException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.SCHEMA));
                assertThat(Ledger.migrate(ds)).isEqualTo("7");
                assertThat(Ledger.migrate(ds)).isEqualTo("7");
                Ledger.verifySchema(ds);
                assertThat(server.psql("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables"
                        + " WHERE table_schema = '" + schema + "'")).isEqualTo("ledger_accounts,ledger_balances,ledger_compensations,"
                        + "ledger_entries,ledger_holds,ledger_partitions,ledger_posting_lines,ledger_quarantine," + Ledger.HISTORY_TABLE);
                assertThatThrownBy(() -> server.psql("INSERT INTO " + schema + ".ledger_accounts (account, balance) VALUES ('x', -1)"))
                        .hasMessageContaining("ledger_accounts_balance_non_negative");
            }
        }

        @Test
        @DisplayName("a ledger made by the first release's script is recognised, migrated in place, and keeps its rows")
        void upgradesALegacyLedger() throws SQLException {
            try (HikariDataSource ds = freshSchema(postgres.server())) {
                legacySchema(ds, Dialect.POSTGRESQL);
                legacyRows(ds);
                assertThatThrownBy(() -> Ledger.verifySchema(ds)).isInstanceOfSatisfying(QuotaException.class,
                        e -> assertThat(e.getMessage()).contains("ledger_partitions"));
                assertThat(Ledger.migrate(ds)).isEqualTo("7");
                assertMigrated(ds);
            }
        }

        @Test
        @DisplayName("a schema shared with an application's own tables gets every migration")
        void sharedSchema() throws SQLException {
            try (HikariDataSource ds = freshSchema(postgres.server())) {
                try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
                    s.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY)");
                }
                assertThat(Ledger.migrate(ds)).isEqualTo("7");
                Ledger.verifySchema(ds);
                assertThat(count(ds, "SELECT COUNT(*) FROM orders")).isZero();
            }
        }
    }

    @Nested
    @DisplayName("on H2")
    class OnH2 {

        @Test
        @DisplayName("migrate is idempotent and verifySchema names missing tables")
        void schema() throws SQLException {
            DataSource ds = Support.h2();
            assertThatThrownBy(() -> Ledger.verifySchema(ds)).isInstanceOfSatisfying(QuotaException.class, e -> {
                assertThat(e.reason()).isEqualTo(QuotaException.Reason.SCHEMA);
                assertThat(e.getMessage()).contains("ledger_accounts", "ledger_quarantine", "ledger_partitions");
            });
            assertThat(Ledger.migrate(ds)).isEqualTo("7");
            assertThat(Ledger.migrate(ds)).isEqualTo("7");
            Ledger.verifySchema(ds);
            assertThat(count(ds, "SELECT COUNT(*) FROM ledger_entries")).isZero();
        }

        @Test
        @DisplayName("a ledger made by the first release's script is migrated in place and keeps its rows")
        void upgradesALegacyLedger() throws SQLException {
            DataSource ds = Support.h2();
            legacySchema(ds, Dialect.H2);
            legacyRows(ds);
            assertThat(Ledger.migrate(ds)).isEqualTo("7");
            assertMigrated(ds);
        }

        @Test
        @DisplayName("the consumer applies entries, is idempotent on redelivery, and quarantines a forged over-deduction")
        void consumerBasics() throws SQLException {
            DataSource ds = Support.h2();
            Ledger.migrate(ds);
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
                // A new group reads the journal from its start: what is left of it (the consumer trimmed what it moved) is
                // the two new entries, and the forged one is refused.
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
