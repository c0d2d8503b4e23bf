package dev.warden.quota.ledger;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.quota.ledger.internal.consume.BatchWriter;
import dev.warden.quota.ledger.internal.store.PartitionFence;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The write path's outcome per entry, batch by batch, written straight through the batch writer: one
 * net update per account still refuses exactly the entry that alone would take a balance below zero,
 * a key the ledger holds is never applied twice (a fresh batch skips the key lookup and leaves the
 * table's key to find it), and the entries' text survives the copy.
 */
class BatchWriterTest {

    @RegisterExtension
    static final PostgresServerExtension postgres = PostgresServerExtension.shared();

    private static final KeyLayout LAYOUT = new KeyLayout("bw", 4);
    private static final String ACCOUNT = "acct";
    private static final int PARTITION = LAYOUT.partition(ACCOUNT);
    private static final String STREAM = LAYOUT.journal(PARTITION);

    @Test
    @DisplayName("PostgreSQL (COPY): dips refused entry by entry, keys held never applied twice, ids copied exactly")
    void onPostgres() throws SQLException {
        try (HikariDataSource pg = Support.freshPostgres(postgres.server())) {
            everyOutcome(pg, Dialect.POSTGRESQL);
        }
    }

    @Test
    @DisplayName("PostgreSQL behind a connection that hides PgJDBC (no COPY: one insert over arrays): the same")
    void onPostgresWithoutCopy() throws SQLException {
        try (HikariDataSource pg = Support.freshPostgres(postgres.server())) {
            everyOutcome(hidingTheDriver(pg), Dialect.POSTGRESQL);
        }
    }

    /** Connections that answer no to every unwrap, as some pools and proxies do. */
    private static DataSource hidingTheDriver(DataSource real) {
        return (DataSource) java.lang.reflect.Proxy.newProxyInstance(DataSource.class.getClassLoader(),
                new Class<?>[]{DataSource.class}, (proxy, method, args) -> {
                    Object result = ConsumerCrashTest.invoke(real, method, args);
                    if (!method.getName().equals("getConnection")) {
                        return result;
                    }
                    Connection c = (Connection) result;
                    return java.lang.reflect.Proxy.newProxyInstance(Connection.class.getClassLoader(),
                            new Class<?>[]{Connection.class}, (p, m, a) -> switch (m.getName()) {
                                case "isWrapperFor" -> false;
                                case "unwrap" -> throw new SQLException("not a wrapper");
                                default -> ConsumerCrashTest.invoke(c, m, a);
                            });
                });
    }

    @Test
    @DisplayName("H2 (a JDBC batch insert): the same")
    void onH2() throws SQLException {
        DataSource h2 = Support.h2();
        Ledger.migrate(h2);
        everyOutcome(h2, Dialect.H2);
    }

    private void everyOutcome(DataSource ds, Dialect dialect) throws SQLException {
        Batches b = new Batches(ds, dialect);
        b.write(true, b.entry("open", 10, ""));
        assertThat(balance(ds)).isEqualTo(10);

        // The deduction alone would leave -5; the top-up after it brings the sum back to +5. Entry by entry,
        // the deduction is refused and the top-up applied, whether or not the batch sums its changes.
        String dip = b.write(true, b.entry("deduct", 15, "r1"), b.entry("topup", 20, "r2")).get(0);
        assertThat(balance(ds)).isEqualTo(30);
        assertThat(quarantined(ds)).containsExactly(dip + " NEGATIVE_BALANCE");
        assertThat(requests(ds)).containsExactly("", "r2");

        // Held quota likewise: a release of what is not held, then a hold.
        String release = b.write(true, b.entry("release", 5, "h0"), b.entry("hold", 5, "h1")).get(0);
        assertThat(balance(ds)).isEqualTo(25);
        assertThat(held(ds)).isEqualTo(5);
        assertThat(quarantined(ds)).containsExactly(dip + " NEGATIVE_BALANCE", release + " NEGATIVE_BALANCE");

        // A batch written again as if it were fresh (Redis delivered it again after losing its last second):
        // the copy meets the key, the lookup finds the same position, and nothing moves.
        List<Map<String, String>> r3 = List.of(b.entry("deduct", 3, "r3"));
        List<String> ids = b.write(true, r3);
        assertThat(balance(ds)).isEqualTo(22);
        b.writeAt(true, ids, r3);
        b.writeAt(false, ids, r3);
        assertThat(balance(ds)).isEqualTo(22);

        // The same request id at a new position (a retry after its idempotency record expired): applied as Redis
        // did, once in the entries, and owed a compensation.
        String replay = b.write(true, b.entry("deduct", 3, "r3")).get(0);
        assertThat(balance(ds)).isEqualTo(19);
        assertThat(compensations(ds)).containsExactly(replay);

        // Twice in one fresh batch: the second is the replay.
        String second = b.write(true, b.entry("deduct", 1, "r4"), b.entry("deduct", 1, "r4")).get(1);
        assertThat(balance(ds)).isEqualTo(17);
        assertThat(compensations(ds)).containsExactly(replay, second);
        assertThat(requests(ds)).containsExactly("", "hold:h1", "r2", "r3", "r4");

        // A backslash is allowed in an id: the copy's text format escapes it.
        b.write(true, b.entry("deduct", 2, "r\\5\\n"));
        assertThat(requests(ds)).contains("r\\5\\n");
        assertThat(balance(ds)).isEqualTo(15);

        // Named balances: a debit the credit after it would cover, refused alone.
        b.write(true, b.posting("p1", "plan=+5"));
        String debit = b.write(true, b.posting("p2", "plan=-8"), b.posting("p3", "plan=+10")).get(0);
        assertThat(named(ds)).isEqualTo(15);
        assertThat(quarantined(ds)).contains(debit + " NEGATIVE_BALANCE");
    }

    /** Batches of one account's partition, written under one fence, with increasing entry ids. */
    private static final class Batches {
        private final DataSource ds;
        private final Dialect dialect;
        private final PartitionFence fence = new PartitionFence(STREAM, 1, "test");
        private long seq;

        Batches(DataSource ds, Dialect dialect) throws SQLException {
            this.ds = ds;
            this.dialect = dialect;
            try (Connection c = ds.getConnection()) {
                fence.claim(c, dialect, Duration.ofSeconds(5));
            } catch (PartitionFence.FencedOut e) {
                throw new AssertionError(e);
            }
        }

        Map<String, String> entry(String kind, long amount, String request) {
            Map<String, String> f = new LinkedHashMap<>();
            f.put("account", ACCOUNT);
            f.put("kind", kind);
            f.put("amount", Long.toString(amount));
            f.put("request", request);
            f.put("balance", "0");
            f.put("token", "-");
            return f;
        }

        Map<String, String> posting(String request, String lines) {
            Map<String, String> f = entry("post", 0, request);
            f.put("lines", lines);
            return f;
        }

        /** Writes the entries at new positions; their entry ids. */
        @SafeVarargs
        final List<String> write(boolean fresh, Map<String, String>... entries) throws SQLException {
            return write(fresh, List.of(entries));
        }

        List<String> write(boolean fresh, List<Map<String, String>> entries) throws SQLException {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < entries.size(); i++) {
                ids.add("1000-" + (++seq));
            }
            writeAt(fresh, ids, entries);
            return ids;
        }

        void writeAt(boolean fresh, List<String> ids, List<Map<String, String>> entries) throws SQLException {
            List<BatchWriter.Raw> raws = new ArrayList<>();
            for (int i = 0; i < ids.size(); i++) {
                raws.add(new BatchWriter.Raw(ids.get(i), entries.get(i)));
            }
            try (Connection c = ds.getConnection()) {
                new BatchWriter(dialect, LAYOUT).write(c, new BatchWriter.Part(PARTITION, STREAM, fence, raws, fresh),
                        Duration.ofSeconds(5));
            } catch (PartitionFence.FencedOut e) {
                throw new AssertionError(e);
            }
        }
    }

    private static long balance(DataSource ds) throws SQLException {
        return Long.parseLong(query(ds, "SELECT balance FROM ledger_accounts WHERE account = '" + ACCOUNT + "'").get(0));
    }

    private static long held(DataSource ds) throws SQLException {
        return Long.parseLong(query(ds, "SELECT held FROM ledger_accounts WHERE account = '" + ACCOUNT + "'").get(0));
    }

    private static long named(DataSource ds) throws SQLException {
        return Long.parseLong(query(ds, "SELECT amount FROM ledger_balances WHERE account = '" + ACCOUNT
                + "' AND name = 'plan'").get(0));
    }

    private static List<String> quarantined(DataSource ds) throws SQLException {
        return query(ds, "SELECT entry_id || ' ' || reason FROM ledger_quarantine ORDER BY entry_seq");
    }

    private static List<String> compensations(DataSource ds) throws SQLException {
        return query(ds, "SELECT entry_id FROM ledger_compensations ORDER BY entry_seq");
    }

    private static List<String> requests(DataSource ds) throws SQLException {
        return query(ds, "SELECT request_id FROM ledger_entries WHERE kind <> 'post' ORDER BY request_id");
    }

    private static List<String> query(DataSource ds, String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(sql);
             ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
