package dev.warden.lock.migration;

import dev.warden.lock.LostReason;
import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockMigrationContractTest;
import dev.warden.testkit.EtcdServer;
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
 * The whole kit on the middle step of a switch from etcd to ZooKeeper; the fault clauses act on
 * ZooKeeper, the backend moved to, while etcd stays up.
 */
@DisplayName("migrating from etcd to ZooKeeper")
class EtcdToZooKeeperMigrationTest extends LockMigrationContractTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(ZooKeeperServer.builder());

    private static EtcdServer etcd;
    private static ZooKeeperNodes nodes;

    @BeforeAll
    static void start() {
        etcd = EtcdServer.start();
        nodes = new ZooKeeperNodes(zookeeper.server().connectString());
    }

    @AfterAll
    static void stop() {
        if (nodes != null) {
            nodes.close();
        }
        if (etcd != null) {
            etcd.close();
        }
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    @Override
    protected Map<String, Object> leftSettings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.endpoints());
    }

    @Override
    protected Map<String, Object> targetSettings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", zookeeper.server().endpoint());
    }

    @Override
    protected boolean hasLeftServerState(String namespace, String name) {
        return etcd.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected boolean hasTargetServerState(String namespace, String name) {
        return !nodes.contenders(namespace, name).isEmpty();
    }

    @Override
    protected void removeOnLeftBackend(String namespace, String name) {
        etcd.deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    protected void removeOnTargetBackend(String namespace, String name) {
        nodes.removeContenders(namespace, name);
    }

    /** ZooKeeper's SUSPENDED ends every lease, normally before the lease's own deadline. */
    @Override
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.SESSION_LOST, LostReason.EXPIRED);
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(zookeeper.server().host(), zookeeper.server().port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "zookeeper://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return "zookeeper://127.0.0.1:" + Ports.free();
    }

    @Override
    protected void pauseServer() {
        zookeeper.server().pause();
    }

    @Override
    protected void resumeServer() {
        if (zookeeper.server().isPaused()) {
            zookeeper.server().resume();
        }
    }
}
