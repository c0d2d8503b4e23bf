package dev.warden.lock.etcd;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockFailoverContractTest;
import dev.warden.testkit.EtcdCluster;
import dev.warden.testkit.EtcdMember;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The failover contract on a 3-member etcd cluster, through the fault etcd is weakest against: a follower
 * frozen (SIGSTOP), so the leader commits through the one follower left, then the leader killed
 * (SIGKILL) and the frozen member thawed, so the two left elect a new leader from what the quorum
 * committed. A commit survives its leader: no two holders may overlap.
 */
@DisplayName("etcd backend, 3-member cluster, failing over")
class EtcdClusterFailoverTest extends LockFailoverContractTest {

    private static EtcdCluster cluster;
    private EtcdMember leader;
    private EtcdMember paused;

    @BeforeAll
    static void startCluster() {
        cluster = EtcdCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", cluster.endpoints());
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return cluster.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected boolean overlapsAllowed() {
        return false;
    }

    /** A client may be connected to the member frozen or killed: its lease may run out meanwhile, told. */
    @Override
    protected boolean leasesOutliveAShortFailover() {
        return false;
    }

    @Override
    protected void holdBackReplication(String namespace, List<String> names) {
        leader = cluster.awaitLeader(Duration.ofSeconds(30));
        paused = cluster.others(leader).get(0);
        paused.pause();
    }

    @Override
    protected void killPrimary(String namespace, List<String> names) {
        leader.kill();
        paused.resume();
    }

    @Override
    protected void awaitNewPrimary(String namespace, List<String> names) {
        EtcdMember next = cluster.awaitLeader(Duration.ofSeconds(60));
        if (next == leader) {
            throw new IllegalStateException("the killed member " + leader + " still leads");
        }
    }
}
