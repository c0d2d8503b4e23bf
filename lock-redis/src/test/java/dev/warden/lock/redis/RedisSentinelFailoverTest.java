package dev.warden.lock.redis;

import dev.warden.lock.tck.LockFailoverContractTest;
import dev.warden.testkit.RedisSentinel;
import dev.warden.testkit.RedisSentinelExtension;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The failover contract on Sentinel: the primary is killed (SIGKILL) after its replica's link was cut
 * and held down, so the grants and releases of the last moments are lost, and the sentinels (down
 * after 2 s) promote the replica.
 */
@DisplayName("Redis backend on Sentinel, failing over")
class RedisSentinelFailoverTest extends LockFailoverContractTest {

    @RegisterExtension
    static final RedisSentinelExtension redis = new RedisSentinelExtension(RedisSentinel.builder()
            .downAfter(Duration.ofSeconds(2)).failoverTimeout(Duration.ofSeconds(10)));

    private RedisServer killed;
    private RedisServer replica;

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.sentinel().uri());
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return Long.valueOf(1).equals(redis.sentinel().primary().command("EXISTS", "{" + namespace + ":" + name + "}:lock"));
    }

    @Override
    protected void holdBackReplication(String namespace, List<String> names) {
        killed = redis.sentinel().primary();
        replica = redis.sentinel().replica();
        // Frozen first, then cut from the primary's side: nothing written from now on reaches it.
        replica.pause();
        killed.command("CLIENT", "KILL", "TYPE", "replica");
    }

    @Override
    protected void killPrimary(String namespace, List<String> names) {
        killed.kill();
        replica.resume();
    }

    @Override
    protected void awaitNewPrimary(String namespace, List<String> names) {
        redis.sentinel().awaitPrimaryOtherThan(killed, Duration.ofSeconds(60));
    }
}
