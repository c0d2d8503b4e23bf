package dev.warden.quota;

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
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two quota tenants on one Redis, each an ACL user limited to its namespace with docs/security.md's minimal
 * ACL for a quota user, credentials from settings: the server refuses tenant B everything of A's.
 */
class QuotaTenantsTest {

    static final String PASSWORD_A = "quota-a-secret-3b9e";
    static final String PASSWORD_B = "quota-b-secret-c41d";

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    @TempDir
    static Path dir;

    /** docs/security.md's minimal ACL for a quota user of one namespace. */
    static String[] quotaAcl(String user, String password, String namespace) {
        return List.of("ACL", "SETUSER", user, "reset", "on", ">" + password, "~" + namespace + ":quota:*",
                "+@connection", "+info", "+script|load", "+evalsha", "+eval", "+get", "+set", "+hget", "+hset",
                "+hincrby", "+hmget", "+hgetall", "+hexists", "+hdel", "+hlen", "+del", "+pexpire", "+pttl", "+xadd", "+zadd", "+zrem",
                "+zrangebyscore").toArray(String[]::new);
    }

    @BeforeAll
    static void tenants() throws Exception {
        redis.server().command(quotaAcl("quota-a", PASSWORD_A, "tenant-a"));
        redis.server().command(quotaAcl("quota-b", PASSWORD_B, "tenant-b"));
        Files.writeString(dir.resolve("a.password"), PASSWORD_A + "\n");
        Files.writeString(dir.resolve("b.password"), PASSWORD_B);
    }

    static Map<String, Object> tenant(String user, String passwordFile, String namespace) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.quota.endpoint", redis.server().uri());
        s.put("warden.quota.namespace", namespace);
        s.put("warden.quota.redis.username", user);
        s.put("warden.quota.redis.password-file", dir.resolve(passwordFile).toString());
        s.putAll(ConnectTimeouts.SETTINGS);
        return s;
    }

    @Test
    @DisplayName("tenant B can neither read nor change tenant A's accounts: the server refuses, A's balance stands")
    void tenantsKeptApart() {
        RedisServer server = redis.server();
        try (QuotaService a = QuotaService.create(tenant("quota-a", "a.password", "tenant-a"));
             QuotaService b = QuotaService.create(tenant("quota-b", "b.password", "tenant-b"))) {
            a.open("m1", 100);
            assertThat(a.deduct("m1", 30, "r1")).isInstanceOf(Outcome.Applied.class);
            b.open("m1", 5);
            assertThat(b.balance("m1")).hasValue(5);
            assertThat(a.balance("m1")).hasValue(70);
            // Every operation of a quota user works under the minimal ACL: holds and named balances too.
            assertThat(a.hold("m1", 20, "h1", java.time.Duration.ofMinutes(5))).isInstanceOf(HoldOutcome.Held.class);
            assertThat(a.capture("m1", "h1", 15)).isInstanceOf(HoldOutcome.Captured.class);
            assertThat(a.hold("m1", 5, "h2", java.time.Duration.ofMinutes(5))).isInstanceOf(HoldOutcome.Held.class);
            assertThat(a.release("m1", "h2")).isInstanceOf(HoldOutcome.Released.class);
            a.expireHolds();
            assertThat(a.openBalance("m1", "points")).isInstanceOf(PostingOutcome.Opened.class);
            assertThat(a.post("m1", "p1", Map.of("points", 40L))).isInstanceOf(PostingOutcome.Posted.class);
            assertThat(a.balances("m1")).hasValueSatisfying(m -> assertThat(m).containsEntry("points", 40L));
            assertThat(a.deduct("m1", 15, "r2")).isInstanceOf(Outcome.Applied.class);
            assertThat(a.balance("m1")).hasValue(40);
            assertThat(a.split("m1", 4)).isInstanceOf(SplitOutcome.Split.class);
            for (int i = 0; i < 40; i++) {
                assertThat(a.deduct("m1", 1, "split-" + i)).as("unit %d of a split account", i).isInstanceOf(Outcome.Applied.class);
            }
            assertThat(a.deduct("m1", 1, "one-more")).isInstanceOf(Outcome.Insufficient.class);
            assertThat(a.merge("m1")).isInstanceOf(SplitOutcome.Merged.class);
            assertThat(a.topUp("m1", 40, "back")).isInstanceOf(Outcome.Applied.class);
            assertThat(a.toString() + b).doesNotContain(PASSWORD_A).doesNotContain(PASSWORD_B);

            // B with raw commands on A's keys.
            for (String[] command : new String[][] {{"KEYS", "*"}, {"SCAN", "0"}, {"HGET", "tenant-a:quota:{p0}:acct:m1", "balance"},
                    {"DEL", "tenant-a:quota:{p0}:acct:m1"}, {"XRANGE", "tenant-a:quota:{p0}:journal", "-", "+"}}) {
                assertThatThrownBy(() -> server.commandAs("quota-b", PASSWORD_B, command)).as(String.join(" ", command))
                        .isInstanceOf(RedisReplyException.class).hasMessageContaining("NOPERM");
            }
            assertThatThrownBy(() -> server.commandAs("quota-b", PASSWORD_B, "HSET", "tenant-a:quota:{p0}:acct:m1", "balance", "1"))
                    .hasMessageContaining("NOPERM");

            // B through Warden, pointed at A's namespace: refused as ACCESS_DENIED.
            try (QuotaService intruder = QuotaService.create(tenant("quota-b", "b.password", "tenant-a"))) {
                assertThatThrownBy(() -> intruder.deduct("m1", 10, "steal")).isInstanceOfSatisfying(QuotaException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.ACCESS_DENIED));
                assertThatThrownBy(() -> intruder.balance("m1")).isInstanceOfSatisfying(QuotaException.class,
                        e -> assertThat(e.reason()).isEqualTo(QuotaException.Reason.ACCESS_DENIED));
            }
            assertThat(a.balance("m1")).hasValue(40);
        }
    }
}
