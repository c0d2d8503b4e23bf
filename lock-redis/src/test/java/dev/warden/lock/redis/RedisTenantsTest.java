package dev.warden.lock.redis;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.RedisReplyException;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two tenants on one Redis, each an ACL user limited to its namespace with docs/security.md's minimal ACL
 * for a lock-only user; credentials come from settings (tenant A's password from a file, tenant B's
 * from an environment variable), not from the endpoint. The server, not Warden, keeps them apart.
 */
class RedisTenantsTest {

    /** Set by this module's Surefire configuration. */
    static final String ENV = "WARDEN_TEST_TENANT_B_PASSWORD";
    static final String PASSWORD_A = "tenant-a-file-secret-91c2";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @TempDir
    static Path dir;
    static Path passwordFileA;

    /** docs/security.md's minimal ACL for a lock-only user of one namespace. */
    static List<String> lockOnlyAcl(String user, String password, String namespace) {
        return List.of("ACL", "SETUSER", user, "reset", "on", ">" + password,
                "~{" + namespace + ":*", "&{" + namespace + ":*",
                "+@connection", "+script|load", "+evalsha", "+eval", "+get", "+set", "+del", "+exists", "+pexpire",
                "+pttl", "+time", "+publish", "+spublish", "+subscribe", "+ssubscribe", "+unsubscribe", "+sunsubscribe",
                "+hget", "+hset", "+hdel", "+zadd", "+zrem", "+zrevrangebyscore");
    }

    @BeforeAll
    static void tenants() throws Exception {
        String passwordB = System.getenv(ENV);
        assertThat(passwordB).as("%s is set by lock-redis/pom.xml's Surefire configuration; run through Maven", ENV)
                .isNotBlank();
        redis.server().command(lockOnlyAcl("tenant-a", PASSWORD_A, "tenant-a").toArray(String[]::new));
        redis.server().command(lockOnlyAcl("tenant-b", passwordB, "tenant-b").toArray(String[]::new));
        passwordFileA = dir.resolve("tenant-a.password");
        Files.writeString(passwordFileA, PASSWORD_A + "\n");
    }

    static Map<String, Object> tenantA(String namespace) {
        Map<String, Object> s = common(namespace);
        s.put("warden.lock.redis.username", "tenant-a");
        s.put("warden.lock.redis.password-file", passwordFileA.toString());
        return s;
    }

    static Map<String, Object> tenantB(String namespace) {
        Map<String, Object> s = common(namespace);
        s.put("warden.lock.redis.username", "tenant-b");
        s.put("warden.lock.redis.password-env", ENV);
        return s;
    }

    static Map<String, Object> common(String namespace) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "redis");
        s.put("warden.lock.endpoints", redis.server().uri());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.request-timeout", "2s");
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        s.put("warden.lock.connect-timeout", "20s");
        return s;
    }

    static void refused(RedisServer server, String... command) {
        assertThatThrownBy(() -> server.commandAs("tenant-b", System.getenv(ENV), command))
                .as(String.join(" ", command)).isInstanceOf(RedisReplyException.class).hasMessageContaining("NOPERM");
    }

    @Test
    @DisplayName("tenant B can neither read, renew, release nor delete tenant A's lock: the server refuses, A keeps it")
    void tenantsKeptApart() throws Exception {
        RedisServer server = redis.server();
        try (LockClient a = LockClient.create(tenantA("tenant-a")); LockClient b = LockClient.create(tenantB("tenant-b"))) {
            Lease held = a.lock("merchant-1").acquire();
            String lockKey = "{tenant-a:merchant-1}:lock";
            Object value = server.command("GET", lockKey);
            assertThat(value).as("A's lock is on the server").isNotNull();

            // B's own namespace works, under the same lock name.
            Lease own = b.lock("merchant-1").acquire();
            assertThat(own.release()).isEqualTo(ReleaseOutcome.RELEASED);

            // B with raw commands on A's keys and channel: read, renew, delete, wake A's waiters.
            refused(server, "GET", lockKey);
            refused(server, "PEXPIRE", lockKey, "1");
            refused(server, "DEL", lockKey, "{tenant-a:merchant-1}:fence");
            refused(server, "SET", lockKey, "stolen");
            refused(server, "PUBLISH", "{tenant-a:merchant-1}:released", "x");
            refused(server, "KEYS", "*");
            refused(server, "SCAN", "0");
            refused(server, "FLUSHALL");

            // B through Warden, pointed at A's namespace: its scripts are refused, as ACCESS_DENIED.
            try (LockClient intruder = LockClient.create(tenantB("tenant-a"))) {
                String logged = CapturedOutput.of(() -> assertThatThrownBy(
                        () -> intruder.lock("merchant-1").tryAcquire(Duration.ofSeconds(1)))
                        .isInstanceOfSatisfying(LockException.class,
                                e -> assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED))
                        .hasMessageContaining("NOPERM"));
                assertThat(logged).doesNotContain(System.getenv(ENV));
            }

            assertThat(server.command("GET", lockKey)).as("A's lock is untouched").isEqualTo(value);
            assertThat(held.isValid()).isTrue();

            // A's waiter in another client subscribes to A's channel under the same ACL and is woken.
            try (LockClient a2 = LockClient.create(tenantA("tenant-a"))) {
                CompletableFuture<Optional<Lease>> waiting = CompletableFuture.supplyAsync(
                        () -> a2.lock("merchant-1").tryAcquire(Duration.ofSeconds(10)));
                Await.until(Duration.ofSeconds(5), "A's waiter subscribes to A's channel", () -> server.command(
                        "PUBSUB", "NUMSUB", "{tenant-a:merchant-1}:released") instanceof List<?> l && Long.valueOf(1).equals(l.get(1)));
                assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
                Optional<Lease> next = waiting.get(10, TimeUnit.SECONDS);
                assertThat(next).isPresent();
                assertThat(next.get().release()).isEqualTo(ReleaseOutcome.RELEASED);
            }
            assertThat(a.toString() + b).doesNotContain(PASSWORD_A).doesNotContain(System.getenv(ENV));
        }
    }

    @Test
    @DisplayName("a wrong password from a file is ACCESS_DENIED; a password both in the endpoint and a setting is a configuration error")
    void settingsErrors() throws Exception {
        Path wrong = dir.resolve("wrong.password");
        Files.writeString(wrong, "not-the-password-5d1e");
        Map<String, Object> s = tenantA("tenant-a");
        s.put("warden.lock.redis.password-file", wrong.toString());
        assertThatThrownBy(() -> LockClient.create(s).close()).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.reason()).as("reason of: %s", dev.warden.testkit.CapturedOutput.chain(e))
                        .isEqualTo(LockException.Reason.ACCESS_DENIED))
                .hasMessageNotContaining("not-the-password-5d1e");

        Map<String, Object> both = tenantA("tenant-a");
        both.put("warden.lock.endpoints", "redis://tenant-a:" + PASSWORD_A + "@" + redis.server().host() + ":" + redis.server().port());
        assertThatThrownBy(() -> LockClient.create(both).close()).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("keep one").hasMessageNotContaining(PASSWORD_A);

        Map<String, Object> twoWays = tenantA("tenant-a");
        twoWays.put("warden.lock.redis.password", PASSWORD_A);
        assertThatThrownBy(() -> LockClient.create(twoWays).close()).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("set only one").hasMessageNotContaining(PASSWORD_A);

        Map<String, Object> unset = tenantB("tenant-b");
        unset.put("warden.lock.redis.password-env", "WARDEN_TEST_NO_SUCH_VARIABLE");
        assertThatThrownBy(() -> LockClient.create(unset).close()).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION))
                .hasMessageContaining("WARDEN_TEST_NO_SUCH_VARIABLE, which is not set");
    }
}
