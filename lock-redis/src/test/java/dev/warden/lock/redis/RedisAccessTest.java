package dev.warden.lock.redis;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.tck.SecretsCheck;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** A Redis that requires a password: a refusal is ACCESS_DENIED naming the endpoint, never the secret. */
class RedisAccessTest {

    static final String PASSWORD = "Pw-access-0k";
    static final String WRONG = "Pw-wr0ng-guess";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @BeforeAll
    static void users() {
        redis.server().command("ACL", "SETUSER", "app", "on", ">" + PASSWORD, "~*", "&*", "+@all");
        redis.server().command("ACL", "SETUSER", "retired", "off", ">" + PASSWORD, "~*", "&*", "+@all");
    }

    static Map<String, Object> settings(String endpoint) {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", endpoint,
                "warden.lock.connect-timeout", "10s", "warden.lock.request-timeout", "2s");
    }

    static String at(RedisServer server, String userInfo) {
        return "redis://" + userInfo + "@" + server.host() + ":" + server.port();
    }

    static LockException refused(Map<String, Object> settings, String secret) {
        return SecretsCheck.refusedWithout(settings, secret);
    }

    @Test
    @DisplayName("a wrong password is ACCESS_DENIED naming the endpoint and WRONGPASS, not UNAVAILABLE")
    void wrongPassword() {
        LockException e = refused(settings(at(redis.server(), "app:" + WRONG)), WRONG);
        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
        assertThat(e.getMessage()).contains("redis://" + redis.server().host() + ":" + redis.server().port())
                .contains("WRONGPASS").doesNotContain("Unable to connect");
    }

    @Test
    @DisplayName("a disabled user is ACCESS_DENIED")
    void disabledUser() {
        LockException e = refused(settings(at(redis.server(), "retired:" + PASSWORD)), PASSWORD);
        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
    }

    @Test
    @DisplayName("no password where the server requires one is ACCESS_DENIED (NOAUTH)")
    void noPassword() {
        try (RedisServer locked = RedisServer.start()) {
            locked.command("ACL", "SETUSER", "default", "resetpass", ">" + PASSWORD);
            LockException e = refused(settings("redis://" + locked.host() + ":" + locked.port()), PASSWORD);
            assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
            assertThat(e.getMessage()).contains("NOAUTH");
            // The password-only form authenticates the default user.
            try (LockClient c = LockClient.create(settings("redis://" + PASSWORD + "@" + locked.host() + ":" + locked.port()))) {
                c.lock("x").acquire().release();
                assertThat(c.toString()).doesNotContain(PASSWORD);
            }
        }
    }

    @Test
    @DisplayName("the right user and password lock and release")
    void rightPassword() {
        try (LockClient c = LockClient.create(settings(at(redis.server(), "app:" + PASSWORD)))) {
            c.lock("x").acquire().release();
        }
    }
}
