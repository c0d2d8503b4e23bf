package dev.warden.lock.redis;

import dev.warden.lock.tck.LockFailoverContractTest;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisClusterExtension;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The failover contract on a Cluster: the primary serving the contended locks is killed (SIGKILL)
 * after its replica's link was cut and held down, so the grants and releases of the last moments are
 * lost, and the cluster (node timeout 2 s) promotes the replica.
 */
@DisplayName("Redis backend on Cluster, failing over")
class RedisClusterFailoverTest extends LockFailoverContractTest {

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension(RedisCluster.builder().nodeTimeout(Duration.ofSeconds(2)));

    private RedisServer killed;
    private RedisServer replica;

    private static String key(String namespace, String name) {
        return "{" + namespace + ":" + name + "}:lock";
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.cluster().uri());
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return Long.valueOf(1).equals(redis.cluster().command(key(namespace, name), "EXISTS", key(namespace, name)));
    }

    @Override
    protected List<String> namesOnOnePrimary(int count) {
        List<String> names = new ArrayList<>(List.of(newName()));
        RedisServer primary = redis.cluster().primaryOf(key(namespace(), names.get(0)));
        while (names.size() < count) {
            String candidate = newName();
            if (redis.cluster().primaryOf(key(namespace(), candidate)) == primary) {
                names.add(candidate);
            }
        }
        return names;
    }

    @Override
    protected void holdBackReplication(String namespace, List<String> names) {
        killed = redis.cluster().primaryOf(key(namespace, names.get(0)));
        replica = redis.cluster().replicaOf(killed);
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
        redis.cluster().awaitNewPrimaryOfSlot(RedisCluster.slot(key(namespace, names.get(0))), killed, Duration.ofSeconds(60));
    }
}
