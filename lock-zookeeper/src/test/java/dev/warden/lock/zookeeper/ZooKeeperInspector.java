package dev.warden.lock.zookeeper;

import dev.warden.lock.zookeeper.internal.Paths;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Reads and edits lock state on the servers directly, not through Warden: its own Curator client
 * with a long session, which syncs with the leader before each read so a follower's lag never hides
 * a write.
 */
final class ZooKeeperInspector implements AutoCloseable {

    private final CuratorFramework client;

    ZooKeeperInspector(String connectString) {
        this(connectString, null);
    }

    /** @param superPassword the password of testkit's digest super user, who reads and edits any node; null for none */
    ZooKeeperInspector(String connectString, String superPassword) {
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder();
        if (superPassword != null) {
            builder.authorization("digest", (dev.warden.testkit.ZooKeeperServer.SUPER_USER + ":" + superPassword)
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        client = builder
                .connectString(connectString)
                .sessionTimeoutMs(60_000)
                .connectionTimeoutMs(10_000)
                .retryPolicy(new RetryNTimes(50, 200))
                .ensembleTracker(false)
                .build();
        client.start();
    }

    /**
     * A freshly started server JVM takes hundreds of milliseconds for its first writes (class loading,
     * no JIT yet), longer than the kit's request timeout; a few writes through every member first.
     */
    static void warmUp(String... members) {
        for (String member : members) {
            try (ZooKeeperInspector warm = new ZooKeeperInspector(member)) {
                for (int i = 0; i < 20; i++) {
                    // A persistent parent: a container one can be reaped between creating it and the child.
                    String path = warm.client.create().creatingParentsIfNeeded()
                            .withMode(org.apache.zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL)
                            .forPath("/warm-up/node-");
                    warm.client.getChildren().forPath(parent(path));
                    warm.client.checkExists().forPath(path);
                    warm.client.delete().forPath(path);
                }
            } catch (Exception e) {
                throw new IllegalStateException("cannot warm up ZooKeeper at " + member, e);
            }
        }
    }

    private static String parent(String path) {
        return path.substring(0, path.lastIndexOf('/'));
    }

    /** The contender nodes queued under the lock, first first. */
    List<String> queue(String namespace, String name) {
        String path = Paths.lockPath(namespace, name);
        try {
            sync(path);
            return client.getChildren().forPath(path).stream()
                    .sorted((a, b) -> a.substring(a.length() - 10).compareTo(b.substring(b.length() - 10)))
                    .toList();
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }

    /** Whether a node exists at {@code path}, as the servers see it now. */
    boolean exists(String path) {
        try {
            sync(path);
            return client.checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw new IllegalStateException("cannot read " + path, e);
        }
    }

    /** The sessions (ephemeral owners) of the nodes queued under the lock, first first. */
    List<Long> owners(String namespace, String name) {
        List<Long> owners = new java.util.ArrayList<>();
        for (String child : queue(namespace, name)) {
            try {
                Stat stat = client.checkExists().forPath(Paths.lockPath(namespace, name) + "/" + child);
                if (stat != null) {
                    owners.add(stat.getEphemeralOwner());
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return owners;
    }

    /** The holder's node (first in the queue), if any. */
    Stat holder(String namespace, String name) {
        List<String> queue = queue(namespace, name);
        if (queue.isEmpty()) {
            return null;
        }
        try {
            return client.checkExists().forPath(Paths.lockPath(namespace, name) + "/" + queue.get(0));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Overwrites the data of the holder's node (first in the queue), as a stray tool might. */
    void overwriteHolder(String namespace, String name, byte[] data) {
        String path = Paths.lockPath(namespace, name) + "/" + queue(namespace, name).get(0);
        try {
            client.setData().forPath(path, data);
        } catch (Exception e) {
            throw new IllegalStateException("cannot write " + path, e);
        }
    }

    /** Deletes every node queued under the lock. */
    void removeAll(String namespace, String name) {
        String path = Paths.lockPath(namespace, name);
        for (String child : queue(namespace, name)) {
            try {
                client.delete().forPath(path + "/" + child);
            } catch (KeeperException.NoNodeException e) {
                // Gone already.
            } catch (Exception e) {
                throw new IllegalStateException("cannot delete " + path + "/" + child, e);
            }
        }
    }

    /** The inspector's Curator client, for tests that look at ACLs. */
    CuratorFramework curator() {
        return client;
    }

    /**
     * Waits until the inspector's own session is connected and caught up. After a server restart on a
     * loaded machine that reconnection was seen to take over 10 s (verify-under-load); how fast the inspector
     * reconnects is not what any test checks, so it gets 30 s.
     */
    private void sync(String path) throws Exception {
        client.blockUntilConnected(30, TimeUnit.SECONDS);
        CompletableFuture<Integer> synced = new CompletableFuture<>();
        client.getZookeeperClient().getZooKeeper().sync("/", (rc, p, ctx) -> synced.complete(rc), null);
        synced.get(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        client.close();
    }
}
