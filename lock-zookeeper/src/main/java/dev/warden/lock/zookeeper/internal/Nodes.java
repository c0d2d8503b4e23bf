package dev.warden.lock.zookeeper.internal;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The ZooKeeper node operations the lock needs, as Curator background calls: create a contender's
 * node, list a queue, stat, watch, delete. Their stages complete where the answer arrives, mostly
 * ZooKeeper's event thread, without a hand-off; what reaches lock-api is bounded by {@link Calls}. The
 * protocol lives here; the decisions (who holds, when a grant counts) live in the driver and its
 * attempts. Stateless apart from its collaborators.
 */
final class Nodes {

    private static final Logger log = LoggerFactory.getLogger(Nodes.class);

    /**
     * How often a create is tried again when the server reaped the lock's parent container between
     * Curator creating it and the create of the child: each try creates the parents again. Two
     * reaper passes in a row hitting the same window would be needed to use more than one.
     */
    static final int PARENT_REAPED_TRIES = 10;

    /** Versioned deletes on their way at once; more wait and go together ({@link DeleteCombiner}). */
    private static final int DELETES_ON_THEIR_WAY = 2;

    /** Queue entries' creates on their way at once; more wait and go together ({@link CreateCombiner}). */
    private static final int CREATES_ON_THEIR_WAY = 2;

    private final CuratorFramework curator;
    private final Calls calls;
    private final DeleteCombiner deletes;
    private final CreateCombiner creates;

    /** @param acl the ACL of every node this client creates, as Curator's ACL provider gives it */
    Nodes(CuratorFramework curator, Calls calls, List<ACL> acl) {
        this.curator = curator;
        this.calls = calls;
        this.deletes = new DeleteCombiner(this::handle, this::deleteAlone, DELETES_ON_THEIR_WAY);
        this.creates = new CreateCombiner(this::handle, acl, (parent, node, data) -> create(parent, node, data, 1),
                this::children, this::delete, calls.executor(), CREATES_ON_THEIR_WAY);
    }

    /**
     * The session's own ZooKeeper handle, which Curator does not retry across a lost connection. Paths
     * are absolute on it as on Curator: the client has no Curator namespace, and endpoints with a chroot
     * are refused ({@link Endpoints}); both would have to be applied here.
     */
    private org.apache.zookeeper.ZooKeeper handle() {
        try {
            return curator.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new IllegalStateException("no ZooKeeper handle", e);
        }
    }

    /** A contender's node as its create answered: its path and, when the reply carried it, its stat. */
    record Created(String path, Stat stat) {
    }

    /**
     * Creates a protected ephemeral sequential node under {@code lockPath}, creating the parents as
     * containers; completes with its path and the stat from the create's own reply (null when the node
     * was found again after a lost reply). Creates started together go as one multi
     * ({@link CreateCombiner}). A parent reaped by the server before the child was created (NoNode) is
     * created again and the create retried, as Curator's own lock recipe does.
     */
    CreateCombiner.Creation create(String lockPath, byte[] data) {
        return creates.create(lockPath, Paths.NODE, data);
    }

    /** As {@link #create(String, byte[])}, the child named {@code node} before its protection and sequence. */
    CreateCombiner.Creation create(String parentPath, String node, byte[] data) {
        return creates.create(parentPath, node, data);
    }

    /** One create alone, through Curator: its protection finds the node again after a lost reply. */
    private CompletableFuture<Created> create(String lockPath, String node, byte[] data, int attempt) {
        String what = "the create of a node under " + lockPath;
        return calls.call(what, cb -> curator.create().storingStatIn(new Stat())
                        .creatingParentContainersIfNeeded().withProtection().withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                        .inBackground(cb).forPath(lockPath + "/" + node, data))
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
        return calls.call(what, cb -> curator.getChildren().inBackground(cb).forPath(lockPath))
                .thenApply(event -> {
                    KeeperException.Code code = KeeperException.Code.get(event.getResultCode());
                    return code == KeeperException.Code.NONODE ? List.<String>of() : calls.check(what, event).getChildren();
                });
    }

    /** A lock's queue as read: the children of its node and the namespace's token floor (0 when absent). */
    record Listing(List<String> children, long floor) {
    }

    /**
     * The children of {@code lockPath} (empty when it does not exist) and the token floor at
     * {@code floorPath}, in that order and in one request, ZooKeeper's multi-read (3.6 and later): the
     * server reads them as it would two reads sent back to back, for one request and one answer. Sent on
     * the session's own handle, which Curator does not retry across a lost connection: then, or on any
     * other failure, they are read again as two reads through Curator, which does.
     */
    CompletableFuture<Listing> childrenAndFloor(String lockPath, String floorPath) {
        CompletableFuture<Listing> result = new CompletableFuture<>();
        try {
            curator.getZookeeperClient().getZooKeeper().multi(List.of(Op.getChildren(lockPath), Op.getData(floorPath)),
                    (rc, path, ctx, results) -> {
                        try {
                            result.complete(listing(rc, results, lockPath, floorPath));
                        } catch (RuntimeException e) {
                            result.completeExceptionally(e);
                        }
                    }, null);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        // In order, as the multi reads them: a floor read before the children could predate a holder's
        // reservation that its release, seen by the children read, followed.
        return result.exceptionallyCompose(error -> children(lockPath)
                .thenCompose(children -> floor(floorPath).thenApply(floor -> new Listing(children, floor))));
    }

    /** The two reads' results; {@code rc} is the first read's error, so only results that are missing count. */
    private Listing listing(int rc, List<OpResult> results, String lockPath, String floorPath) {
        if (results == null || results.size() != 2) {
            throw calls.translate("the children of " + lockPath + " and the token floor",
                    KeeperException.create(KeeperException.Code.get(rc)));
        }
        List<String> children;
        if (results.get(0) instanceof OpResult.GetChildrenResult listed) {
            children = listed.getChildren();
        } else if (errorCode(results.get(0)) == KeeperException.Code.NONODE) {
            children = List.of();
        } else {
            throw calls.translate("the children of " + lockPath, KeeperException.create(errorCode(results.get(0)), lockPath));
        }
        long floor;
        if (results.get(1) instanceof OpResult.GetDataResult read) {
            floor = floorValue(floorPath, read.getData());
        } else if (errorCode(results.get(1)) == KeeperException.Code.NONODE) {
            floor = 0;
        } else {
            throw calls.translate("the token floor " + floorPath, KeeperException.create(errorCode(results.get(1)), floorPath));
        }
        return new Listing(children, floor);
    }

    private static KeeperException.Code errorCode(OpResult result) {
        return result instanceof OpResult.ErrorResult error ? KeeperException.Code.get(error.getErr())
                : KeeperException.Code.SYSTEMERROR;
    }

    /** The node's stat, or null when it does not exist. */
    CompletableFuture<Stat> stat(String path) {
        String what = "the stat of " + path;
        return calls.call(what, cb -> curator.checkExists().inBackground(cb).forPath(path))
                .thenApply(event -> statOf(what, event));
    }

    /** A node's data and the zxid that created it. */
    record Data(byte[] bytes, long czxid) {
    }

    /** The node's data and czxid, or null when it does not exist. */
    CompletableFuture<Data> data(String path) {
        String what = "the data of " + path;
        return calls.call(what, cb -> curator.getData().inBackground(cb).forPath(path)).thenApply(event -> {
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
        return calls.call(what, cb -> curator.checkExists().usingWatcher(watcher).inBackground(cb).forPath(path))
                .thenApply(event -> statOf(what, event));
    }

    /** Sets {@code watcher} on the children of {@code path}; completes with them, null when it is gone. */
    CompletableFuture<List<String>> watchChildren(String path, Watcher watcher) {
        String what = "the watch on the children of " + path;
        return calls.call(what, cb -> curator.getChildren().usingWatcher(watcher).inBackground(cb).forPath(path))
                .thenApply(event -> KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE
                        ? null : calls.check(what, event).getChildren());
    }

    /** Deletes a node of this client's (guaranteed: Curator retries while the session lives). */
    CompletableFuture<Void> delete(String path) {
        String what = "the delete of " + path;
        return calls.call(what, cb -> curator.delete().guaranteed().inBackground(cb).forPath(path))
                .thenApply(event -> {
                    calls.check(what, event, KeeperException.Code.NONODE);
                    return null;
                });
    }

    /**
     * Deletes {@code path} if its data version is {@code version}: OK, NONODE or BADVERSION, else fails;
     * together with the deletes started at the same time ({@link DeleteCombiner}).
     */
    CompletableFuture<KeeperException.Code> delete(String path, int version) {
        return deletes.delete(path, version);
    }

    /** {@link #delete(String, int)} alone, through Curator, guaranteed while the session lives. */
    private CompletableFuture<KeeperException.Code> deleteAlone(String path, int version) {
        String what = "the delete of " + path;
        return calls.call(what, cb -> curator.delete().guaranteed().withVersion(version)
                        .inBackground(cb).forPath(path))
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
        return calls.call(what, cb -> curator.getData().inBackground(cb).forPath(path)).thenApply(event -> {
            if (KeeperException.Code.get(event.getResultCode()) == KeeperException.Code.NONODE) {
                return new Floor(0, -1);
            }
            CuratorEvent read = calls.check(what, event);
            return new Floor(floorValue(path, read.getData()), read.getStat().getVersion());
        });
    }

    /** A number node's value, in decimal; anything else is a protocol error. */
    private static long floorValue(String path, byte[] data) {
        String text = new String(data == null ? new byte[0] : data, java.nio.charset.StandardCharsets.UTF_8);
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new dev.warden.lock.LockException(dev.warden.lock.LockException.Reason.PROTOCOL,
                    "the token floor " + path + " holds '" + text + "', not a number");
        }
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
        return calls.call(what, cb -> curator.transaction().inBackground(cb).forOperations(ops))
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
        return calls.call(what, cb -> curator.transaction().inBackground(cb).forOperations(ops))
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
                        .inBackground(cb).forPath(path, data))
                : calls.call(what, cb -> curator.setData().withVersion(read.version()).inBackground(cb).forPath(path, data));
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
