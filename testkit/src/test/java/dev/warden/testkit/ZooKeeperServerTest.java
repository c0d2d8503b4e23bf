package dev.warden.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class ZooKeeperServerTest {

    @Test
    @DisplayName("a standalone server serves on a loopback port, freezes on pause and keeps its data across kill and restart")
    void faultsOnAStandaloneServer() throws Exception {
        try (ZooKeeperServer zk = ZooKeeperServer.start()) {
            assertThat(zk.host()).isEqualTo("127.0.0.1");
            assertThat(zk.endpoint()).isEqualTo("zookeeper://127.0.0.1:" + zk.port());
            assertThat(zk.mode()).contains("standalone");
            assertThat(zk.fourLetterWord("srvr")).contains("Zookeeper version: 3.9");

            ZooKeeper client = connect(zk.connectString(), 2_000);
            try {
                assertThat(client.getSessionTimeout()).as("a two-second session is negotiable").isEqualTo(2_000);
                client.create("/kept", new byte[] {1}, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } finally {
                client.close();
            }

            zk.pause();
            assertThat(zk.isPaused()).isTrue();
            assertThatThrownBy(() -> zk.fourLetterWord("srvr")).isInstanceOf(UncheckedIOException.class);
            assertThat(zk.mode()).isEmpty();
            zk.resume();
            assertThat(zk.mode()).contains("standalone");

            int port = zk.port();
            zk.kill();
            assertThat(zk.isRunning()).isFalse();
            assertThat(zk.mode()).isEmpty();
            zk.restart();
            assertThat(zk.port()).isEqualTo(port);
            assertThat(zk.mode()).contains("standalone");
            ZooKeeper again = connect(zk.connectString(), 2_000);
            try {
                assertThat(again.exists("/kept", false)).as("data survives a kill").isNotNull();
            } finally {
                again.close();
            }
        }
    }

    @Test
    @DisplayName("a three-server ensemble elects a leader, survives the leader's death and takes it back as a follower")
    void ensembleLeaderFailover() throws Exception {
        try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.start()) {
            assertThat(ensemble.servers()).hasSize(3);
            ZooKeeperServer leader = ensemble.leader();
            assertThat(ensemble.servers()).filteredOn(s -> s.mode().filter("follower"::equals).isPresent()).hasSize(2);

            leader.kill();
            ZooKeeperServer next = ensemble.leader();
            assertThat(next).isNotSameAs(leader);
            ZooKeeper client = connect(ensemble.connectString(), 4_000);
            try {
                client.create("/after-failover", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } finally {
                client.close();
            }

            leader.restart();
            assertThat(leader.mode()).contains("follower");
            ensemble.pause();
            assertThat(ensemble.isPaused()).isTrue();
            assertThat(ensemble.servers()).allMatch(s -> s.mode().isEmpty());
            ensemble.resume();
            ensemble.awaitQuorum();
            ZooKeeper onRestarted = connect(leader.connectString(), 4_000);
            try {
                onRestarted.sync("/", (rc, path, ctx) -> { }, null);
                assertThat(onRestarted.exists("/after-failover", false)).isNotNull();
            } finally {
                onRestarted.close();
            }
        }
    }

    @Test
    @DisplayName("a digest user's creator-only node refuses another user and yields to the super user")
    void superUser() throws Exception {
        assertThat(ZooKeeperServer.digest("alice", "pw"))
                .isEqualTo(org.apache.zookeeper.server.auth.DigestAuthenticationProvider.generateDigest("alice:pw"));
        try (ZooKeeperServer zk = ZooKeeperServer.builder().superUser("super-pw").start()) {
            ZooKeeper alice = connect(zk.connectString(), 2_000);
            ZooKeeper bob = connect(zk.connectString(), 2_000);
            ZooKeeper root = connect(zk.connectString(), 2_000);
            try {
                alice.addAuthInfo("digest", "alice:pw".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                bob.addAuthInfo("digest", "bob:pw".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                root.addAuthInfo("digest", (ZooKeeperServer.SUPER_USER + ":super-pw").getBytes(java.nio.charset.StandardCharsets.UTF_8));
                alice.create("/alice", new byte[0], ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
                alice.create("/alice/held", new byte[0], ZooDefs.Ids.CREATOR_ALL_ACL, CreateMode.PERSISTENT);
                assertThatThrownBy(() -> bob.setData("/alice/held", new byte[] {1}, -1))
                        .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
                // A delete is judged by the parent's ACL.
                assertThatThrownBy(() -> bob.delete("/alice/held", -1))
                        .isInstanceOf(org.apache.zookeeper.KeeperException.NoAuthException.class);
                root.delete("/alice/held", -1);
                root.delete("/alice", -1);
                assertThat(root.exists("/alice", false)).isNull();
            } finally {
                alice.close();
                bob.close();
                root.close();
            }
        }
    }

    private static ZooKeeper connect(String connectString, int sessionTimeoutMillis) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connectString, sessionTimeoutMillis, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(Duration.ofSeconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
            zk.close();
            throw new AssertionError("could not connect to " + connectString);
        }
        return zk;
    }
}
