package dev.warden.lock.zookeeper;

import dev.warden.lock.LostReason;
import dev.warden.lock.tck.LockLeaseCacheContractTest;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * The core and fault contracts with lease caching on: every released lock is kept for the next acquisition
 * (for 300 ms, longer than most clauses wait between a release and the next acquisition), against one real
 * ZooKeeper server launched for this class, with a 10 ms container reaper as {@link ZooKeeperLockContractTest}'s.
 * A kept hold's queue is watched for contenders; its block of tokens is reserved through the token floor.
 */
@DisplayName("ZooKeeper backend, leases kept (warden.lock.lease-cache), 10 ms container reaper")
class ZooKeeperLeaseCacheContractTest extends LockLeaseCacheContractTest {

    /** Longer than most clauses take between a release and the next acquisition, short enough not to slow them. */
    private static final Duration KEPT_FOR = Duration.ofMillis(300);

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().containerCheckInterval(Duration.ofMillis(10)));

    private static ZooKeeperInspector inspector;

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(server().connectString());
        inspector = new ZooKeeperInspector(server().connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    private static ZooKeeperServer server() {
        return zookeeper.server();
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", server().endpoint(),
                "warden.lock.lease-cache", KEPT_FOR);
    }

    @Override
    protected Duration keptFor() {
        return KEPT_FOR;
    }

    /** Its grants reserve no tokens: the client reserves each kept grant's block at its first release. */
    @Override
    protected boolean keptReleaseAsksServer() {
        return true;
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server().host(), server().port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "zookeeper://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return "zookeeper://127.0.0.1:" + ZooKeeperLockContractTest.freePort();
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
     * A kept hold's block of tokens is reserved by raising the namespace's token floor while the hold is held,
     * and a holder read adds the floor of the moment to the node's czxid: once a hold of any lock of the
     * namespace was kept after an earlier grant, that grant's holder reads above its token, never below (as in
     * a migration's step, see {@code LockKit#observedTermExact}).
     */
    @Override
    protected boolean observedTermExact() {
        return false;
    }

    /** As {@link ZooKeeperLockContractTest#lossReasonsWhenServerPaused()}. */
    @Override
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.SESSION_LOST, LostReason.EXPIRED);
    }

    @Override
    protected void pauseServer() {
        server().pause();
    }

    @Override
    protected void resumeServer() {
        if (server().isPaused()) {
            server().resume();
        }
    }
}
