package dev.warden.testkit;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One cluster for the class: its shape, key routing, a forced failover, a killed primary, a moved slot. */
class RedisClusterTest {

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension(RedisCluster.builder().nodeTimeout(Duration.ofSeconds(2)));

    @Test
    @DisplayName("three primaries serving every slot, each with a replica, created by redis-cli")
    void shape() {
        RedisCluster c = redis.cluster();
        assertThat(c.nodes()).hasSize(6);
        assertThat(c.primaries()).hasSize(3);
        assertThat(new HashSet<>(c.primaries().stream().map(c::replicaOf).toList())).hasSize(3);
        assertThat(c.uri()).startsWith("redis-cluster://127.0.0.1:");
        assertThat(RedisCluster.slot("{user1000}.following")).isEqualTo(RedisCluster.slot("user1000"));
        assertThat(RedisCluster.slot("123456789")).isEqualTo(12739);
    }

    @Test
    @DisplayName("command(key, ...) reaches the primary of the key's slot; another primary answers MOVED")
    void routing() {
        RedisCluster c = redis.cluster();
        assertThat(c.command("{a}k", "SET", "{a}k", "v")).isEqualTo("OK");
        assertThat(c.primaryOf("{a}k").command("GET", "{a}k")).isEqualTo("v");
        RedisServer other = c.primaries().stream().filter(p -> p != c.primaryOf("{a}k")).findFirst().orElseThrow();
        assertThatThrownBy(() -> other.command("GET", "{a}k"))
                .isInstanceOfSatisfying(RedisReplyException.class, e -> assertThat(e.code()).isEqualTo("MOVED"));
    }

    @Test
    @DisplayName("CLUSTER FAILOVER promotes a replica with the data")
    void forcedFailover() {
        RedisCluster c = redis.cluster();
        c.command("{b}k", "SET", "{b}k", "v");
        RedisServer primary = c.primaryOf("{b}k");
        RedisServer replica = c.replicaOf(primary);
        c.failover(replica);
        assertThat(c.primaryOf("{b}k")).isSameAs(replica);
        assertThat(replica.command("GET", "{b}k")).isEqualTo("v");
    }

    @Test
    @DisplayName("a killed primary is replaced by its replica; heal brings it back as a replica")
    void killedPrimary() {
        RedisCluster c = redis.cluster();
        int slot = RedisCluster.slot("{c}k");
        RedisServer primary = c.primaryOfSlot(slot);
        RedisServer replica = c.replicaOf(primary);
        primary.kill();
        assertThat(c.awaitNewPrimaryOfSlot(slot, primary, Duration.ofSeconds(30))).isSameAs(replica);
        c.heal();
        assertThat(c.replicaOf(replica)).isSameAs(primary);
    }

    @Test
    @DisplayName("moveSlot reshards one slot with its keys")
    void moveSlot() {
        RedisCluster c = redis.cluster();
        c.command("{d}k", "SET", "{d}k", "v");
        int slot = RedisCluster.slot("{d}k");
        RedisServer from = c.primaryOfSlot(slot);
        RedisServer to = c.primaries().stream().filter(p -> p != from).findFirst().orElseThrow();
        c.moveSlot(slot, to);
        assertThat(c.primaryOfSlot(slot)).isSameAs(to);
        assertThat(to.command("GET", "{d}k")).isEqualTo("v");
        assertThat(List.of(c.primaries().size())).containsExactly(3);
    }
}
