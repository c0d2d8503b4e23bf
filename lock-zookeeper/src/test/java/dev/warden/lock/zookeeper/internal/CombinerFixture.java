package dev.warden.lock.zookeeper.internal;

import dev.warden.testkit.ZooKeeperServer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the combiners' tests share: one real ZooKeeper server per class, which a test pauses while it
 * starts writes so that the first is on its way and the rest wait; a Curator client per test, and a
 * parent node of the test's own.
 */
abstract class CombinerFixture {

    static ZooKeeperServer server;

    final String parent = "/combined-" + UUID.randomUUID().toString().substring(0, 8);
    CuratorFramework curator;

    @BeforeAll
    static void startServer() {
        server = ZooKeeperServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void connect() throws Exception {
        curator = CuratorFrameworkFactory.builder().connectString(server.connectString())
                .sessionTimeoutMs(30_000).retryPolicy(new RetryOneTime(100)).build();
        curator.start();
        assertThat(curator.blockUntilConnected(20, TimeUnit.SECONDS)).isTrue();
        curator.create().forPath(parent);
    }

    @AfterEach
    void closeClient() {
        if (server.isPaused()) {
            server.resume();
        }
        curator.close();
    }

    /** The test client's own ZooKeeper handle, as the driver's {@code Nodes} gets it. */
    ZooKeeper handle() {
        try {
            return curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
