package dev.warden.lock.jdbc;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What lease caching asks of the table: a refused poll notifies the contender channel only when the holder's
 * grant is watched (one its client may keep), so polls refused by any other holder still write nothing; and a
 * table made before the column {@code watched} still serves locks, keeps nothing, and gets the column from a
 * client that creates the schema.
 */
@DisplayName("jdbc backend: contenders of kept locks")
class JdbcContenderTest {

    private static final Duration LONG_TTL = Duration.ofSeconds(30);

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    private static PostgresServer server() {
        return postgres.server();
    }

    private static Map<String, Object> settings(String database, Object... overrides) {
        Map<String, Object> s = new LinkedHashMap<>(LockTable.settings(server()));
        s.put("warden.lock.endpoints", "jdbc:postgresql://" + server().host() + ":" + server().port() + "/" + database);
        s.put("warden.lock.namespace", "contender-" + UUID.randomUUID().toString().substring(0, 8));
        s.put("warden.lock.ttl", LONG_TTL);
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(20));
        for (int i = 0; i < overrides.length; i += 2) {
            s.put((String) overrides[i], overrides[i + 1]);
        }
        return s;
    }

    @Test
    @DisplayName("a poll refused by a watched holder notifies the contender channel; one refused by any other holder does not")
    void onlyWatchedHoldersAreNotified() throws Exception {
        Map<String, Object> plain = settings(server().database());
        Map<String, Object> keeping = new LinkedHashMap<>(plain);
        keeping.put("warden.lock.lease-cache", LONG_TTL.dividedBy(2));
        try (Connection listener = connect(server().database());
             LockClient holder = LockClient.create(plain);
             LockClient keeper = LockClient.create(keeping);
             LockClient contender = LockClient.create(plain)) {
            try (Statement s = listener.createStatement()) {
                s.execute("LISTEN warden_lock_contender");
            }
            try (Lease unwatched = holder.lock("unwatched").acquire(); Lease watched = keeper.lock("watched").acquire()) {
                assertThat(contender.lock("unwatched").tryAcquire(Duration.ZERO)).isEmpty();
                assertThat(contender.lock("watched").tryAcquire(Duration.ZERO)).isEmpty();
                // Notifications arrive in commit order: had the first refusal notified, it would come first.
                List<PGNotification> received = receive(listener, 1);
                assertThat(received).hasSize(1);
                assertThat(received.get(0).getParameter()).as("the watched lock's wake-up key")
                        .isEqualTo(wakeUpKey((String) plain.get("warden.lock.namespace"), "watched"));
                assertThat(watched.isValid()).isTrue();
                assertThat(unwatched.isValid()).isTrue();
            }
        }
    }

    @Test
    @DisplayName("a table without the column watched serves locks and keeps nothing; a client that creates the schema adds the column")
    void tableBeforeTheColumn() throws Exception {
        String database = "old_shape_" + UUID.randomUUID().toString().substring(0, 8).replace('-', '_');
        server().psql("CREATE DATABASE " + database);
        try (Connection c = connect(database); Statement s = c.createStatement()) {
            s.execute("CREATE SEQUENCE warden_lock_token");
            s.execute("CREATE TABLE warden_lock (namespace text NOT NULL, name text NOT NULL, owner text,"
                    + " token bigint NOT NULL, expires_at timestamptz NOT NULL, floor bigint NOT NULL DEFAULT 0,"
                    + " evicted_token bigint, PRIMARY KEY (namespace, name))");
            s.execute("CREATE TABLE warden_lock_epoch (namespace text PRIMARY KEY, epoch integer NOT NULL)");
        }
        Map<String, Object> keepingOld = settings(database, "warden.lock.lease-cache", LONG_TTL.dividedBy(2),
                "warden.lock.jdbc.create-schema", false);
        try (LockClient keeper = LockClient.create(keepingOld)) {
            Lease first = keeper.lock("a").acquire();
            assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(held(database, (String) keepingOld.get("warden.lock.namespace"), "a"))
                    .as("kept on a table that cannot report its contenders").isFalse();
            Lease second = keeper.lock("a").acquire();
            assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
            second.release();
        }
        Map<String, Object> keeping = settings(database, "warden.lock.lease-cache", LONG_TTL.dividedBy(2));
        try (LockClient keeper = LockClient.create(keeping)) {
            keeper.lock("a").acquire().release();
            assertThat(held(database, (String) keeping.get("warden.lock.namespace"), "a"))
                    .as("kept once the schema's creator added the column").isTrue();
        }
    }

    private static boolean held(String database, String namespace, String name) throws SQLException {
        try (Connection c = connect(database);
             var s = c.prepareStatement("SELECT 1 FROM warden_lock WHERE namespace = ? AND name = ? AND owner IS NOT NULL"
                     + " AND expires_at > clock_timestamp()")) {
            s.setString(1, namespace);
            s.setString(2, name);
            try (var r = s.executeQuery()) {
                return r.next();
            }
        }
    }

    /** Waits up to 10 s for {@code count} notifications, then returns what arrived within 200 ms more (none expected). */
    private static List<PGNotification> receive(Connection c, int count) throws SQLException {
        PGConnection pg = c.unwrap(PGConnection.class);
        List<PGNotification> all = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (all.size() < count && System.nanoTime() - deadline < 0) {
            PGNotification[] got = pg.getNotifications(100);
            if (got != null) {
                all.addAll(List.of(got));
            }
        }
        PGNotification[] more = pg.getNotifications(200);
        if (more != null) {
            all.addAll(List.of(more));
        }
        return all;
    }

    /** The payload the driver notifies for a lock: a hash of its namespace and name, as the release's. */
    private static String wakeUpKey(String namespace, String name) throws Exception {
        byte[] h = MessageDigest.getInstance("SHA-256").digest((namespace + '\n' + name).getBytes(StandardCharsets.UTF_8));
        return Base64.getUrlEncoder().withoutPadding().encodeToString(h).substring(0, 22);
    }

    private static Connection connect(String database) throws SQLException {
        return DriverManager.getConnection("jdbc:postgresql://" + server().host() + ":" + server().port() + "/"
                + database + "?user=" + server().user());
    }
}
