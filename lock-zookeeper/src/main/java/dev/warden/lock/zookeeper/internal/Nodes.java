package dev.warden.lock.zookeeper.internal;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The ZooKeeper node operations the lock needs, as Curator background calls whose callbacks run on
 * the driver thread: create a contender's node, list a queue, stat, watch, delete. The protocol
 * lives here; the decisions (who holds, when a grant counts) live in the driver and its attempts.
 * Stateless apart from its collaborators.
 */
final class Nodes {

    private static final Logger log = LoggerFactory.getLogger(Nodes.class);

    /**
     * How often a create is tried again when the server reaped the lock's parent container between
     * Curator creating it and the create of the child: each try creates the parents again. Two
     * reaper passes in a row hitting the same window would be needed to use more than one.
     */
    static final int PARENT_REAPED_TRIES = 10;

    private final CuratorFramework curator;
    private final ScheduledExecutorService executor;
    private final Calls calls;

    Nodes(CuratorFramework curator, ScheduledExecutorService executor, Calls calls) {
        this.curator = curator;
        this.executor = executor;
        this.calls = calls;
    }

    /** A contender's node as its create answered: its path and, when the reply carried it, its stat. */
    record Created(String path, Stat stat) {
    }

    /**
     * Creates a protected ephemeral sequential node under {@code lockPath}, creating the parents as
     * containers; completes with its path and the stat from the create's own reply (null when Curator
     * found the node again after a lost reply). A parent reaped by the server before the child was
     * created (NoNode) is created again and the create retried, as Curator's own lock recipe does.
     */
    CompletableFuture<Created> create(String lockPath, byte[] data) {
        return create(lockPath, Paths.NODE, data, 1);
    }

    /** As {@link #create(String, byte[])}, the child named {@code node} before its protection and sequence. */
    CompletableFuture<Created> create(String parentPath, String node, byte[] data) {
        return create(parentPath, node, data, 1);
    }

    private CompletableFuture<Created> create(String lockPath, String node, byte[] data, int attempt) {
        String what = "the create of a node under " + lockPath;
        return calls.call(what, cb -> curator.create().storingStatIn(new Stat())
                        .creatingParentContainersIfNeeded().withProtection().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .inBackground(cb, executor).forPath(lockPath + "/" + node, data))
                .thenCompose(event -> {
                    if (KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE
                            && attempt < PARENT_REAPED_TRIES) {
                        log.debug("the parent of {} was reaped before the create; creating it again (try {})", lockPath, attempt + 1);
                        return create(lockPath, node, data, attempt + 1);
                    }
                    CuratorEvent created = calls.check(what, event);
                    Stat stat = created.getStat();
                    return CompletableFuture.completedFuture(
                            new Created(created.getName(), stat == null || stat.getCzxid() == 0 ? null : stat));
                });
    }

    /** The children of {@code lockPath}; empty when it does not exist. */
    CompletableFuture<List<String>> children(String lockPath) {
        String what = "the children of " + lockPath;
        return calls.call(what, cb -> curator.getChildren().inBackground(cb, executor).forPath(lockPath))
                .thenApply(event -> {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    return code == KeeperException.Code.NONODE ? List.<String>of() : calls.check(what, event).getChildren();
                });
    }

    /** The node's stat, or null when it does not exist. */
    CompletableFuture<Stat> stat(String path) {
        String what = "the stat of " + path;
        return calls.call(what, cb -> curator.checkExists().inBackground(cb, executor).forPath(path))
                .thenApply(event -> statOf(what, event));
    }

    /** A node's data and the zxid that created it. */
    record Data(byte[] bytes, long czxid) {
    }

    /** The node's data and czxid, or null when it does not exist. */
    CompletableFuture<Data> data(String path) {
        String what = "the data of " + path;
        return calls.call(what, cb -> curator.getData().inBackground(cb, executor).forPath(path)).thenApply(event -> {
            if (KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE) {
                return null;
            }
            CuratorEvent read = calls.check(what, event);
            return new Data(read.getData() == null ? new byte[0] : read.getData(), read.getStat().getCzxid());
        });
    }

    /** Sets {@code watcher} on {@code path}; completes with its stat, null when it is already gone. */
    CompletableFuture<Stat> watch(String path, Watcher watcher) {
        String what = "the watch on " + path;
        return calls.call(what, cb -> curator.checkExists().usingWatcher(watcher).inBackground(cb, executor).forPath(path))
                .thenApply(event -> statOf(what, event));
    }

    /** Sets {@code watcher} on the children of {@code path}; completes with them, null when it is gone. */
    CompletableFuture<List<String>> watchChildren(String path, Watcher watcher) {
        String what = "the watch on the children of " + path;
        return calls.call(what, cb -> curator.getChildren().usingWatcher(watcher).inBackground(cb, executor).forPath(path))
                .thenApply(event -> KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE
                        ? null : calls.check(what, event).getChildren());
    }

    /** Deletes a node of this client's (guaranteed: Curator retries while the session lives). */
    CompletableFuture<Void> delete(String path) {
        String what = "the delete of " + path;
        return calls.call(what, cb -> curator.delete().guaranteed().inBackground(cb, executor).forPath(path))
                .thenApply(event -> {
                    calls.check(what, event, KeeperException.Code.NONODE);
                    return null;
                });
    }

    /** Deletes {@code path} if its data version is {@code version}: OK, NONODE or BADVERSION, else fails. */
    CompletableFuture<KeeperException.Code> delete(String path, int version) {
        String what = "the delete of " + path;
        return calls.call(what, cb -> curator.delete().guaranteed().withVersion(version)
                        .inBackground(cb, executor).forPath(path))
                .thenApply(event -> KeeperException.Code.get(
                        calls.check(what, event, KeeperException.Code.NONODE, KeeperException.Code.BADVERSION).getResultCode()));
    }

    /** A token floor node as read: its value (0 when absent) and data version (-1 when absent). */
    record Floor(long value, int version) {
    }

    /** The token floor at {@code path}: 0 when the node does not exist. */
    CompletableFuture<Long> floor(String path) {
        return floorNode(path).thenApply(Floor::value);
    }

    /** The token floor node at {@code path}, with its version. */
    CompletableFuture<Floor> floorNode(String path) {
        String what = "the token floor " + path;
        return calls.call(what, cb -> curator.getData().inBackground(cb, executor).forPath(path)).thenApply(event -> {
            if (KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE) {
                return new Floor(0, -1);
            }
            CuratorEvent read = calls.check(what, event);
            String text = new String(read.getData(), java.nio.charset.StandardCharsets.UTF_8);
            try {
                return new Floor(Long.parseLong(text), read.getStat().getVersion());
            } catch (NumberFormatException e) {
                throw new dev.warden.lock.LockException(dev.warden.lock.LockException.Reason.PROTOCOL,
                        "the token floor " + path + " holds '" + text + "', not a number");
            }
        });
    }

    /**
     * One transaction: while {@code holder} exists with {@code version}, sets the floor node to
     * {@code value}: created when {@code read} found none, else written guarded by its version.
     *
     * @return true when applied; false when either guard failed (nothing applied)
     */
    CompletableFuture<Boolean> writeFloor(String holder, int version, String floorPath, Floor read, long value) {
        String what = "raising the token floor " + floorPath;
        byte[] data = Long.toString(value).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        List<CuratorOp> ops = new ArrayList<>();
        try {
            ops.add(curator.transactionOp().check().withVersion(version).forPath(holder));
            ops.add(read.version() < 0
                    ? curator.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(floorPath, data)
                    : curator.transactionOp().setData().withVersion(read.version()).forPath(floorPath, data));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return calls.call(what, cb -> curator.transaction().inBackground(cb, executor).forOperations(ops))
                .thenApply(event -> KeeperException.Code.get(calls.check(what, event, KeeperException.Code.NONODE,
                        KeeperException.Code.BADVERSION, KeeperException.Code.NODEEXISTS).getResultCode()) == KeeperException.Code.OK);
    }

    /**
     * One transaction: writes {@code czxid} to the mark (created when {@code markExists} is false) and
     * deletes {@code node}. False when the node is gone or the mark appeared or went meanwhile (nothing applied).
     */
    CompletableFuture<Boolean> markAndDelete(String mark, boolean markExists, long czxid, String node) {
        String what = "the eviction of " + node;
        byte[] data = Long.toString(czxid).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        List<CuratorOp> ops = new ArrayList<>();
        try {
            ops.add(markExists ? curator.transactionOp().setData().forPath(mark, data)
                    : curator.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(mark, data));
            ops.add(curator.transactionOp().delete().forPath(node));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
        return calls.call(what, cb -> curator.transaction().inBackground(cb, executor).forOperations(ops))
                .thenApply(event -> KeeperException.Code.get(calls.check(what, event, KeeperException.Code.NONODE,
                        KeeperException.Code.NODEEXISTS).getResultCode()) == KeeperException.Code.OK);
    }

    /**
     * Sets the number node {@code path} to {@code value} with no holder to guard it: created (with its
     * parents) when {@code read} found none, else written guarded by its version.
     *
     * @return true when written; false when another client changed or created it first
     */
    CompletableFuture<Boolean> writeNumber(String path, Floor read, long value) {
        String what = "the write of " + path;
        byte[] data = Long.toString(value).getBytes(java.nio.charset.StandardCharsets.UTF_8);
        CompletableFuture<CuratorEvent> call = read.version() < 0
                ? calls.call(what, cb -> curator.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT)
                        .inBackground(cb, executor).forPath(path, data))
                : calls.call(what, cb -> curator.setData().withVersion(read.version()).inBackground(cb, executor).forPath(path, data));
        return call.thenApply(event -> KeeperException.Code.get(calls.check(what, event, KeeperException.Code.NODEEXISTS,
                KeeperException.Code.BADVERSION).getResultCode()) == KeeperException.Code.OK);
    }

    private Stat statOf(String what, CuratorEvent event) {
        KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
        if (code == KeeperException.Code.NONODE) {
            return null;
        }
        return calls.check(what, event).getStat();
    }
}
