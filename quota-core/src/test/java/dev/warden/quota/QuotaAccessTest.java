package dev.warden.quota;

import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** A Redis that requires a password: a refusal is ACCESS_DENIED naming the endpoint, never the secret. */
class QuotaAccessTest {

    static final String PASSWORD = "Pw-quota-0k";
    static final String WRONG = "Pw-quota-wr0ng";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @BeforeAll
    static void users() {
        redis.server().command("ACL", "SETUSER", "quota-app", "on", ">" + PASSWORD, "~*", "&*", "+@all");
    }

    static Map<String, Object> settings(String endpoint) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.quota.endpoint", endpoint);
        s.put("warden.quota.connect-timeout", "10s");
        return s;
    }

    static QuotaException refused(Map<String, Object> settings, String secret) {
        AtomicReference<QuotaException> thrown = new AtomicReference<>();
        String output = CapturedOutput.of(() -> {
            try (QuotaService q = QuotaService.create(settings)) {
                throw new AssertionError("connected: " + q);
            } catch (QuotaException e) {
                thrown.set(e);
            }
        });
        assertThat(CapturedOutput.chain(thrown.get())).doesNotContain(secret);
        assertThat(output).doesNotContain(secret);
        return thrown.get();
    }

    @Test
    @DisplayName("a wrong password is ACCESS_DENIED naming the endpoint and WRONGPASS, not UNAVAILABLE")
    void wrongPassword() {
        RedisServer s = redis.server();
        QuotaException e = refused(settings("redis://quota-app:" + WRONG + "@" + s.host() + ":" + s.port()), WRONG);
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.ACCESS_DENIED);
        assertThat(e.getMessage()).contains("redis://" + s.host() + ":" + s.port()).contains("WRONGPASS");
    }

    @Test
    @DisplayName("no password where the server requires one is ACCESS_DENIED (NOAUTH)")
    void noPassword() {
        try (RedisServer locked = RedisServer.start()) {
            locked.command("ACL", "SETUSER", "default", "resetpass", ">" + PASSWORD);
            QuotaException e = refused(settings("redis://" + locked.host() + ":" + locked.port()), PASSWORD);
            assertThat(e.reason()).isEqualTo(QuotaException.Reason.ACCESS_DENIED);
            assertThat(e.getMessage()).contains("NOAUTH");
        }
    }

    @Test
    @DisplayName("a user without INFO or the script commands is ACCESS_DENIED (NOPERM), not a protocol error")
    void missingPermission() {
        RedisServer s = redis.server();
        s.command("ACL", "SETUSER", "quota-narrow", "on", ">" + PASSWORD, "~*", "&*", "+@all", "-info");
        QuotaException e = refused(settings("redis://quota-narrow:" + PASSWORD + "@" + s.host() + ":" + s.port()), PASSWORD);
        assertThat(e.reason()).isEqualTo(QuotaException.Reason.ACCESS_DENIED);
        assertThat(e.getMessage()).contains("NOPERM");
    }

    @Test
    @DisplayName("the right user and password open the service")
    void rightPassword() {
        RedisServer s = redis.server();
        try (QuotaService q = QuotaService.create(settings("redis://quota-app:" + PASSWORD + "@" + s.host() + ":" + s.port()))) {
            assertThat(q.toString()).doesNotContain(PASSWORD);
        }
    }
}
