package dev.warden.testkit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** One deployment for the class: the sentinels agree, a forced failover and a killed primary promote the replica, heal restores it. */
class RedisSentinelTest {

    @RegisterExtension
    static final RedisSentinelExtension deployment = new RedisSentinelExtension(RedisSentinel.builder()
            .downAfter(Duration.ofSeconds(1)).failoverTimeout(Duration.ofSeconds(5)));

    @Test
    @DisplayName("one primary, one replica in sync, three sentinels that agree, on loopback ports")
    void shape() {
        RedisSentinel s = deployment.sentinel();
        assertThat(s.dataNodes()).hasSize(2);
        assertThat(s.sentinels()).hasSize(3);
        assertThat(s.uri()).startsWith("redis-sentinel://127.0.0.1:").endsWith("/" + RedisSentinel.MASTER_NAME);
        RedisServer primary = s.primary();
        assertThat(primary.command("SET", "k", "v")).isEqualTo("OK");
        assertThat(((List<?>) s.replica().command("ROLE")).get(0)).isEqualTo("slave");
        assertThat(s.sentinels().get(0).command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", RedisSentinel.MASTER_NAME))
                .isEqualTo(List.of("127.0.0.1", Integer.toString(primary.port())));
    }

    @Test
    @DisplayName("SENTINEL FAILOVER promotes the replica; the former primary follows it")
    void forcedFailover() {
        RedisSentinel s = deployment.sentinel();
        RedisServer before = s.primary();
        RedisServer after = s.failover();
        assertThat(after).isNotSameAs(before);
        assertThat(s.primary()).isSameAs(after);
        s.heal();
        assertThat(s.replica()).isSameAs(before);
    }

    @Test
    @DisplayName("a killed primary is replaced by its replica; heal brings it back as a replica")
    void killedPrimary() {
        RedisSentinel s = deployment.sentinel();
        RedisServer before = s.primary();
        before.kill();
        RedisServer after = s.awaitPrimaryOtherThan(before, Duration.ofSeconds(30));
        assertThat(after).isNotSameAs(before);
        s.heal();
        assertThat(s.primary()).isSameAs(after);
        assertThat(s.replica()).isSameAs(before);
    }
}
