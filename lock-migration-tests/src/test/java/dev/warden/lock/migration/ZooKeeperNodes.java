package dev.warden.lock.migration;

import dev.warden.lock.zookeeper.internal.Paths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;

import java.util.List;

/**
 * Reads and removes a lock's contenders on a ZooKeeper server directly, not through Warden: its own
 * Curator client with a long session. A lock's token floor child is not a contender.
 */
final class ZooKeeperNodes implements AutoCloseable {

    private final CuratorFramework client;

    ZooKeeperNodes(String connectString) {
        client = CuratorFrameworkFactory.builder().connectString(connectString).sessionTimeoutMs(60_000)
                .connectionTimeoutMs(10_000).retryPolicy(new RetryNTimes(50, 200)).ensembleTracker(false).build();
        client.start();
    }

    /** The contender nodes under the lock. */
    List<String> contenders(String namespace, String name) {
        String path = Paths.lockPath(namespace, name);
        try {
            return client.getChildren().forPath(path).stream().filter(c -> !c.startsWith("floor-")).toList();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }

    /** Deletes every contender of the lock. */
    void removeContenders(String namespace, String name) {
        String path = Paths.lockPath(namespace, name);
        for (String child : contenders(namespace, name)) {
            try {
                client.delete().forPath(path + "/" + child);
            } catch (KeeperException.NoNodeException e) {
                // Gone already.
            } catch (Exception e) {
                throw new IllegalStateException("cannot delete " + path + "/" + child, e);
            }
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
