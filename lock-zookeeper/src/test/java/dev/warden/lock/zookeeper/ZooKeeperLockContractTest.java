package dev.warden.lock.zookeeper;

import dev.warden.lock.LostReason;
import dev.warden.lock.tck.LockProcessFaultContractTest;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Set;

/**
 * The core and fault contracts against one real ZooKeeper server launched for this class. Its
 * container reaper runs every 10 ms instead of every minute, so a lock's parent node emptied by a
 * release is deleted while the next acquisition creates its node under it, often, not once a day:
 * every clause runs through that race (the fresh-names clause provokes it on each of its rounds).
 */
@DisplayName("ZooKeeper backend, one server, 10 ms container reaper")
class ZooKeeperLockContractTest extends LockProcessFaultContractTest {

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
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", server().endpoint());
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
        return "zookeeper://127.0.0.1:" + freePort();
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
        server().pause();
    }

    @Override
    protected void resumeServer() {
        if (server().isPaused()) {
            server().resume();
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
