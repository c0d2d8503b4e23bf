package dev.warden.lock.jdbc;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Configuration, bad input and privileges: clear, typed errors that never show a secret. */
@DisplayName("jdbc backend: configuration, bad input, privileges")
class JdbcLockProviderTest {

    private static final String SECRET = "s3cret-Pa55word";

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(LockTable.server());

    private static PostgresServer server() {
        return postgres.server();
    }

    private static Map<String, Object> settings(Object... overrides) {
        Map<String, Object> s = new LinkedHashMap<>(LockTable.settings(server()));
        s.put("warden.lock.namespace", "provider-" + UUID.randomUUID().toString().substring(0, 8));
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(3));
        for (int i = 0; i < overrides.length; i += 2) {
            s.put((String) overrides[i], overrides[i + 1]);
        }
        return s;
    }

    /**
     * The connect timeout of the clients that do connect: a cold JVM's first connection under CI load can take over the
     * 5 s default (and the 3 s {@link #settings} keeps for the refusals); connecting is not what these tests test.
     */
    private static final Duration CONNECTS_WITHIN = Duration.ofSeconds(20);

    private static LockException refused(Map<String, Object> settings) {
        try (LockClient c = LockClient.create(settings)) {
            throw new AssertionError("opened " + c);
        } catch (LockException e) {
            assertThat(e.getMessage()).doesNotContain(SECRET);
            return e;
        }
    }

    @Test
    @DisplayName("is chosen by configuration: a client of the jdbc backend takes a lock another client sees")
    void chosenByConfiguration() {
        Map<String, Object> s = settings("warden.lock.connect-timeout", CONNECTS_WITHIN);
        try (LockClient a = LockClient.create(s); LockClient b = LockClient.create(s)) {
            assertThat(a.backend()).isEqualTo("jdbc");
            try (Lease held = a.lock("report").acquire()) {
                assertThat(b.lock("report").tryAcquire(Duration.ZERO)).isEmpty();
                assertThat(held.fencingToken()).isPositive();
            }
            try (Lease next = b.lock("report").tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
                assertThat(next.isValid()).isTrue();
            }
        }
    }

    @Test
    @DisplayName("endpoints other than one jdbc:postgresql:// URL with a database, a login in the URL, bad options: CONFIGURATION, all reported, no secret shown")
    void badConfiguration() {
        LockException e = refused(settings("warden.lock.endpoints", "jdbc:mysql://127.0.0.1:3306/x"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("not a jdbc:postgresql:// URL", "PostgreSQL only");

        e = refused(settings("warden.lock.endpoints", "jdbc:postgresql://127.0.0.1:1/a,jdbc:postgresql://127.0.0.1:2/b"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("must be one jdbc:postgresql://");

        e = refused(settings("warden.lock.endpoints", "jdbc:postgresql://127.0.0.1:" + server().port() + "/"
                + server().database() + "?user=warden&password=" + SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("not in the URL");

        e = refused(settings("warden.lock.endpoints", "jdbc:postgresql://127.0.0.1:" + server().port()));
        assertThat(e.getMessage()).contains("names no database");

        e = refused(settings("warden.lock.jdbc.pasword", SECRET));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("unknown setting warden.lock.jdbc.pasword");

        e = refused(settings("warden.lock.jdbc.pool-size", "0", "warden.lock.jdbc.password", SECRET,
                "warden.lock.jdbc.password-env", "SOME_VAR"));
        assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        assertThat(e.getMessage()).contains("warden.lock.jdbc.pool-size", "set only one");
    }

    @Test
    @DisplayName("no database answering within the connect timeout: UNAVAILABLE, and the password is not in the message")
    void unreachable() {
        LockException e = refused(settings("warden.lock.endpoints",
                "jdbc:postgresql://127.0.0.1:" + JdbcLockContractTest.freePort() + "/x", "warden.lock.jdbc.password", SECRET,
                "warden.lock.connect-timeout", Duration.ofSeconds(1)));
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
    }

    @Test
    @DisplayName("a user without privileges on the lock table: ACCESS_DENIED when it takes a lock, nothing held")
    void withoutPrivileges() {
        // The table exists (another client created it); this user may log in, not touch it.
        try (LockClient owner = LockClient.create(settings("warden.lock.connect-timeout", CONNECTS_WITHIN))) {
            owner.lock("warm-up").acquire().release();
        }
        String role = "nopriv_" + UUID.randomUUID().toString().substring(0, 8);
        server().psql("CREATE ROLE " + role + " LOGIN");
        try (LockClient c = LockClient.create(settings("warden.lock.jdbc.username", role,
                "warden.lock.jdbc.create-schema", "false", "warden.lock.connect-timeout", CONNECTS_WITHIN))) {
            assertThatThrownBy(() -> c.lock("report").tryAcquire(Duration.ofSeconds(2)))
                    .isInstanceOfSatisfying(LockException.class, e -> {
                        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
                        assertThat(e.getMessage()).contains("permission denied");
                    });
        }
    }
}
