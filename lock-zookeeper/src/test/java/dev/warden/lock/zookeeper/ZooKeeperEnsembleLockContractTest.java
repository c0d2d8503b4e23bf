package dev.warden.lock.zookeeper;

import dev.warden.lock.LostReason;
import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.ZooKeeperEnsemble;
import dev.warden.testkit.ZooKeeperEnsembleExtension;
import dev.warden.testkit.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.Set;

/**
 * The core and fault contracts (a holder's process killed or frozen is ZooKeeperLockContractTest's)
 * against a real three-server ensemble. Clients get every member; a client
 * behind the kit's proxy gets only the proxied member; pausing the server pauses every member.
 */
@DisplayName("ZooKeeper backend, three-server ensemble")
class ZooKeeperEnsembleLockContractTest extends LockFaultContractTest {

    @RegisterExtension
    static final ZooKeeperEnsembleExtension zookeeper = new ZooKeeperEnsembleExtension();

    private static ZooKeeperInspector inspector;

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(ensemble().servers().stream().map(dev.warden.testkit.ZooKeeperServer::connectString).toArray(String[]::new));
        inspector = new ZooKeeperInspector(ensemble().connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    private static ZooKeeperEnsemble ensemble() {
        return zookeeper.ensemble();
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", ensemble().endpoints());
    }

    @Override
    protected InetSocketAddress serverAddress() {
        ZooKeeperServer member = ensemble().server(0);
        return new InetSocketAddress(member.host(), member.port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "zookeeper://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return "zookeeper://127.0.0.1:" + ZooKeeperLockContractTest.freePort() + ",zookeeper://127.0.0.1:"
                + ZooKeeperLockContractTest.freePort();
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return !inspector.queue(namespace, name).isEmpty();
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        inspector.removeAll(namespace, name);
    }

    /**
     * By default SUSPENDED ends every lease, and the client normally notices a frozen server before
     * the lease's deadline; a client thread starved on a loaded machine may notice it only after.
     */
    @Override
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.SESSION_LOST, LostReason.EXPIRED);
    }

    @Override
    protected void pauseServer() {
        ensemble().pause();
    }

    @Override
    protected void resumeServer() {
        if (ensemble().isPaused()) {
            ensemble().resume();
        }
    }
}
