package dev.warden.lock.zookeeper;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.zookeeper.internal.Paths;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lock parents are container nodes, which the server deletes once emptied. When it deletes one
 * between Curator creating the parents and the create of Warden's own node, the create fails with
 * NoNode; the driver creates the parents again and retries, as Curator's own lock does. With
 * lock-api's retries turned off ({@code outage-tolerance=0s}) only the driver can save the round.
 */
@DisplayName("ZooKeeper: lock parents reaped by the server")
class ZooKeeperContainerReaperTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().containerCheckInterval(Duration.ofMillis(10)));

    @Test
    @DisplayName("40 rounds on fresh names, each racing the reaper for the emptied namespace node: every acquire succeeds")
    void parentReapedBeforeTheChildIsCreated() {
        String namespace = "reaper";
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        try (LockClient client = LockClient.create(Map.of("warden.lock.backend", "zookeeper",
                "warden.lock.endpoints", zookeeper.server().endpoint(), "warden.lock.namespace", namespace,
                "warden.lock.ttl", "2s", "warden.lock.outage-tolerance", "0s", "warden.lock.connect-timeout", "20s"));
             ZooKeeperInspector inspector = new ZooKeeperInspector(zookeeper.server().connectString())) {
            for (int round = 0; round < 40; round++) {
                String name = "round-" + round;
                try (Lease lease = client.lock(name).acquire()) {
                    assertThat(lease.isValid()).isTrue();
                }
                // Once this lock's parent is reaped the namespace node is empty and due next: the following
                // round's create races its deletion.
                Await.until(Duration.ofSeconds(5), "the server reaps the parent of " + name,
                        () -> !inspector.exists(Paths.lockPath(namespace, name)));
            }
        }
    }
}
