package dev.warden.lock.zookeeper;

import dev.warden.lock.tck.LockFailoverContractTest;
import dev.warden.testkit.ZooKeeperEnsemble;
import dev.warden.testkit.ZooKeeperEnsembleExtension;
import dev.warden.testkit.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.Map;

/**
 * The failover contract on a 3-server ZooKeeper ensemble, through the fault ZooKeeper is weakest against:
 * a follower frozen (SIGSTOP), so the leader commits through the one follower left, then the leader
 * killed (SIGKILL) and the frozen follower thawed: every session connected to the leader moves to
 * another server or expires, and the two left elect a new leader from what the quorum committed. A
 * commit survives its leader, and a session that expired loses its locks with it: no two holders may
 * overlap.
 */
@DisplayName("ZooKeeper ensemble failover")
class ZooKeeperEnsembleFailoverTest extends LockFailoverContractTest {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static ZooKeeperInspector inspector;
    private ZooKeeperServer leader;
    private ZooKeeperServer paused;

    @BeforeAll
    static void connectInspector() {
        ZooKeeperEnsemble ensemble = zookeeper.ensemble();
        ZooKeeperInspector.warmUp(ensemble.servers().stream().map(ZooKeeperServer::connectString).toArray(String[]::new));
        inspector = new ZooKeeperInspector(ensemble.connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    /**
     * {@code lost-on=lost}: a lease rides out its server's death while its session moves to another, as the
     * clause expects of a lease that a failover shorter than its TTL leaves held (with the default, the
     * disconnection alone would end it, safely but sooner).
     */
    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", zookeeper.ensemble().endpoints(),
                "warden.lock.zookeeper.lost-on", "lost");
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return !inspector.queue(namespace, name).isEmpty();
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
        ZooKeeperEnsemble ensemble = zookeeper.ensemble();
        leader = ensemble.leader();
        paused = ensemble.servers().stream().filter(s -> s != leader).findFirst().orElseThrow();
        paused.pause();
    }

    @Override
    protected void killPrimary(String namespace, List<String> names) {
        leader.kill();
        paused.resume();
    }

    @Override
    protected void awaitNewPrimary(String namespace, List<String> names) {
        ZooKeeperServer next = zookeeper.ensemble().leader();
        if (next == leader) {
            throw new IllegalStateException("the killed server " + leader + " still leads");
        }
    }
}
