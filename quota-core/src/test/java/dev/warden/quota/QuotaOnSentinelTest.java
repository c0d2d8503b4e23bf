package dev.warden.quota;

import dev.warden.testkit.RedisSentinel;
import dev.warden.testkit.RedisSentinelExtension;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The quota engine through Sentinel: it finds the primary the sentinels name, and once a failover
 * (to a replica that never loaded the scripts) is complete — the former primary a replica, its clients
 * disconnected — its callers, retrying with the same request ids, reach the new primary; every change
 * applies once.
 */
@DisplayName("quota through Sentinel")
class QuotaOnSentinelTest {

    @RegisterExtension
    static final RedisSentinelExtension redis = new RedisSentinelExtension();

    static QuotaService quota;

    @BeforeAll
    static void connect() {
        quota = QuotaService.create(Map.of("warden.quota.endpoint", redis.sentinel().uri(),
                "warden.quota.connect-timeout", "10s", "warden.quota.request-timeout", "2s"));
    }

    @AfterAll
    static void close() {
        quota.close();
    }

    @Test
    @DisplayName("deductions go on through a failover; retried with their request ids, each applies once")
    void throughAFailover() {
        String account = "s-" + UUID.randomUUID();
        assertThat(quota.open(account, 1_000)).isInstanceOf(Outcome.Applied.class);
        assertThat(quota.deduct(account, 10, "before")).isInstanceOf(Outcome.Applied.class);
        // SENTINEL FAILOVER promotes the replica without waiting for it to catch up (replication is
        // asynchronous): under load the opening could still be on its way, and the promoted node would have no
        // account. What this test checks starts once the replica has it.
        assertThat(redis.sentinel().primary().command(Duration.ofSeconds(15), "WAIT", "1", "10000")).as("replicas that acknowledged")
                .isEqualTo(1L);
        RedisServer replica = redis.sentinel().replica();
        replica.command("SCRIPT", "FLUSH");

        RedisServer promoted = redis.sentinel().failover();
        assertThat(promoted).isSameAs(replica);
        // Until the sentinels turn the former primary into a replica (and disconnect its clients), a client
        // may still write to it, and such writes are lost when it resyncs: Sentinel's window, not Warden's.
        redis.sentinel().heal();

        Outcome after = Await.retryWhileUnavailable(Duration.ofSeconds(30), () -> quota.deduct(account, 20, "after"));
        assertThat(after.isApplied()).isTrue();
        assertThat(quota.deduct(account, 20, "after")).isInstanceOf(Outcome.Duplicate.class);
        assertThat(quota.balance(account)).hasValue(970);
        assertThat(promoted.command("HGET", new dev.warden.quota.redis.KeyLayout(16).accountKey(account), "balance"))
                .isEqualTo("970");
    }

    @Test
    @DisplayName("sentinels and data nodes with their own users: the engine and its Redis lock log in to each; a wrong sentinel password is ACCESS_DENIED")
    void sentinelAndDataLogins() {
        String sentinelPassword = "Quota-sentinel-pw-5d2a";
        String dataPassword = "Quota-data-pw-81c3";
        for (RedisServer sentinel : redis.sentinel().sentinels()) {
            sentinel.command("ACL", "SETUSER", "quota-sentinel", "reset", "on", ">" + sentinelPassword, "+@connection",
                    "+sentinel|get-master-addr-by-name");
        }
        for (RedisServer node : redis.sentinel().dataNodes()) {
            node.command("ACL", "SETUSER", "quota-app", "reset", "on", ">" + dataPassword, "~*", "&*", "+@all");
        }
        Map<String, Object> settings = new java.util.HashMap<>(Map.of("warden.quota.endpoint", redis.sentinel().uri(),
                "warden.quota.connect-timeout", "10s", "warden.quota.request-timeout", "2s", "warden.quota.lock", "redis",
                "warden.quota.redis.username", "quota-app", "warden.quota.redis.password", dataPassword,
                "warden.quota.redis.sentinel.username", "quota-sentinel", "warden.quota.redis.sentinel.password", sentinelPassword,
                // The lock client's own connect timeout, as the engine's: a loaded host once took over 5 s to ask a sentinel.
                "warden.lock.connect-timeout", "10s"));
        String account = "auth-" + UUID.randomUUID();
        try (QuotaService q = QuotaService.create(settings)) {
            assertThat(q.open(account, 100)).isInstanceOf(Outcome.Applied.class);
            assertThat(q.charge(account, "c1", balance -> 30)).isInstanceOf(Outcome.Applied.class);
            assertThat(q.balance(account)).hasValue(70);
            assertThat(q.toString()).doesNotContain(sentinelPassword).doesNotContain(dataPassword);
        }
        settings.put("warden.quota.redis.sentinel.password", "Wrong-sentinel-pw-1111");
        try (QuotaService q = QuotaService.create(settings)) {
            throw new AssertionError("connected: " + q);
        } catch (QuotaException e) {
            assertThat(e.reason()).isEqualTo(QuotaException.Reason.ACCESS_DENIED);
            assertThat(e.getMessage()).contains(redis.sentinel().uri().substring("redis-sentinel://".length(), 20))
                    .doesNotContain("Wrong-sentinel-pw-1111").doesNotContain(dataPassword);
        }
    }
}
