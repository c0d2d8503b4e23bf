package dev.warden.lock.migration;

import dev.warden.lock.LostReason;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Set;

/**
 * The whole kit on the middle step of a switch from etcd to ZooKeeper; the fault clauses act on
 * ZooKeeper, the backend moved to, while etcd stays up.
 */
@DisplayName("migrating from etcd to ZooKeeper")
class EtcdToZooKeeperMigrationTest extends MigrationTest {

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

    @Override
    Side left() {
        return new EtcdSide(() -> etcd);
    }

    @Override
    Side target() {
        return new ZooKeeperSide(zookeeper::server, () -> nodes);
    }

    /** ZooKeeper's SUSPENDED ends every lease, normally before the lease's own deadline. */
    @Override
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.SESSION_LOST, LostReason.EXPIRED);
    }
}
