package dev.warden.lock.redis;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.Lease;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.RedisSentinelExtension;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Sentinels and data nodes with their own ACL users: the sentinels' login comes from
 * {@code warden.lock.redis.sentinel.*}, the data nodes' from {@code warden.lock.redis.*}. The
 * sentinel user holds only docs/security.md's minimal sentinel ACL, so a lock that works shows every
 * command Warden sends a sentinel ran as that user; a wrong sentinel password is refused by the
 * sentinel itself.
 */
class RedisSentinelAuthTest {

    static final String SENTINEL_PASSWORD = "Sentinel-pw-7f1c";
    static final String DATA_PASSWORD = "Data-pw-2be9";

    @RegisterExtension
    static final RedisSentinelExtension redis = new RedisSentinelExtension();

    /** docs/security.md's minimal ACL for Warden's user on a sentinel: Lettuce asks for the primary on every connect. */
    static String[] sentinelAcl(String user, String password) {
        return new String[] {"ACL", "SETUSER", user, "reset", "on", ">" + password, "+@connection", "+sentinel|get-master-addr-by-name"};
    }

    @BeforeAll
    static void users() {
        for (RedisServer sentinel : redis.sentinel().sentinels()) {
            sentinel.command(sentinelAcl("warden-sentinel", SENTINEL_PASSWORD));
        }
        // ACL users are not replicated: each data node gets its own.
        for (RedisServer node : redis.sentinel().dataNodes()) {
            node.command("ACL", "SETUSER", "warden-app", "reset", "on", ">" + DATA_PASSWORD, "~*", "&*", "+@all");
        }
    }

    static Map<String, Object> settings(String sentinelPassword) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "redis");
        s.put("warden.lock.endpoints", redis.sentinel().uri());
        s.put("warden.lock.connect-timeout", "10s");
        s.put("warden.lock.redis.username", "warden-app");
        s.put("warden.lock.redis.password", DATA_PASSWORD);
        s.put("warden.lock.redis.sentinel.username", "warden-sentinel");
        s.put("warden.lock.redis.sentinel.password", sentinelPassword);
        return s;
    }

    @Test
    @DisplayName("with the sentinels' and the data nodes' users, a lock is granted and released; the client names no secret")
    void bothLogins() {
        try (LockClient c = LockClient.create(settings(SENTINEL_PASSWORD))) {
            Lease lease = c.lock("auth").acquire();
            assertThat(redis.sentinel().primary().command("EXISTS", "{warden:auth}:lock")).isEqualTo(1L);
            lease.release();
            assertThat(c.toString()).doesNotContain(SENTINEL_PASSWORD).doesNotContain(DATA_PASSWORD);
        }
    }

    @Test
    @DisplayName("a wrong sentinel password is ACCESS_DENIED by the sentinels, naming the endpoint, never the secret")
    void wrongSentinelPassword() {
        String wrong = "Wrong-sentinel-pw-0000";
        AtomicReference<LockException> thrown = new AtomicReference<>();
        String output = CapturedOutput.of(() -> {
            try (LockClient c = LockClient.create(settings(wrong))) {
                throw new AssertionError("connected: " + c);
            } catch (LockException e) {
                thrown.set(e);
            }
        });
        LockException e = thrown.get();
        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
        assertThat(e.getMessage()).contains(redis.sentinel().uri());
        assertThat(CapturedOutput.chain(e) + output).doesNotContain(wrong).doesNotContain(DATA_PASSWORD);
        assertThat(redis.sentinel().primary().command("KEYS", "*:lock")).asList().isEmpty();
    }

    @Test
    @DisplayName("sentinel settings on a plain redis:// endpoint, or a sentinel user without a password, are configuration errors")
    void sentinelSettingsErrors() {
        Map<String, Object> plain = settings(SENTINEL_PASSWORD);
        plain.put("warden.lock.endpoints", redis.sentinel().primary().uri());
        assertThatThrownBy(() -> LockClient.create(plain)).isInstanceOfSatisfying(LockException.class, e -> {
            assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
            assertThat(e.getMessage()).contains("sentinel.* settings apply to redis-sentinel:// endpoints only")
                    .doesNotContain(SENTINEL_PASSWORD);
        });
        Map<String, Object> noPassword = settings(SENTINEL_PASSWORD);
        noPassword.remove("warden.lock.redis.sentinel.password");
        assertThatThrownBy(() -> LockClient.create(noPassword)).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.getMessage()).contains("sentinel.username needs a password"));
    }
}
