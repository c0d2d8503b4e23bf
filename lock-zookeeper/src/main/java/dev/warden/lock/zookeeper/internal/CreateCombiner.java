package dev.warden.lock.zookeeper.internal;

import org.apache.curator.framework.imps.ProtectedUtils;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.CreateOptions;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Sends the queue entries of attempts started at the same time (protected ephemeral sequential
 * nodes) as one ZooKeeper {@code multi} ({@link MultiCombiner}): a busy client pays a write's proposal
 * and log entry once per batch rather than per acquisition. The entries of one {@code multi} are under
 * different parents ({@link #key}).
 *
 * <p>Each entry is named as Curator's protected create names it, {@code _c_<uuid>-<node>}, with its
 * own id, and created with {@code create2} so that the answer carries its stat, as a create alone does.
 * A {@code multi} is all or nothing:
 * <ul>
 *   <li>answered OK: every entry was created;</li>
 *   <li>answered with an error (a parent reaped or missing, no permission): nothing was created. The
 *       server checks the ops in order and stops at the first it refuses, so the entries before it
 *       (whose parents it found) go back to the head of the queue to go together again, and the refused
 *       one and those after it are sent alone through {@code alone}, Curator's protected create, which
 *       creates the parents: at most one refusal per batch;</li>
 *   <li>no answer (a lost connection, an expired session, any error in the reply's header) or an
 *       answer this client cannot read: the outcome is unknown, so each entry is looked for by its id
 *       among its parent's children, as Curator's protected create does after a lost reply; found, it
 *       is the entry (its stat read later), otherwise it is sent alone. When even that read fails, the
 *       attempt's poll fails (lock-api abandons it and may try again), and the entry, should the
 *       {@code multi} have created it, is looked for and deleted in the background, a second after each
 *       failed look, for as long as the session that sent it lives (its end removes the entry anyway);</li>
 *   <li>not sent (no handle, a closed client): nothing can exist, and each entry is sent alone.</li>
 * </ul>
 * Creates sent alone after a refused or unanswered {@code multi} are not counted among the calls on
 * their way.
 *
 * <p>Concurrency: the queue is {@link MultiCombiner}'s; the rest is final.
 */
final class CreateCombiner extends MultiCombiner<CreateCombiner.Create> {

    private static final Logger log = LoggerFactory.getLogger(CreateCombiner.class);

    /** One create sent alone: the parent, the node's name before its protection and sequence, its data. */
    interface Alone {
        CompletableFuture<Nodes.Created> create(String parent, String node, byte[] data);
    }

    private final Supplier<ZooKeeper> handle;
    private final CreateOptions options;
    private final Alone alone;
    /** The children of a parent, through Curator (retried across a lost connection); empty when it is gone. */
    private final Function<String, CompletableFuture<List<String>>> children;
    /** Deletes a node, through Curator (guaranteed while the session lives). */
    private final Function<String, CompletableFuture<Void>> delete;
    private final ScheduledExecutorService timer;

    CreateCombiner(Supplier<ZooKeeper> handle, List<org.apache.zookeeper.data.ACL> acl, Alone alone,
                   Function<String, CompletableFuture<List<String>>> children, Function<String, CompletableFuture<Void>> delete,
                   ScheduledExecutorService timer, int maxOnTheirWay) {
        super(maxOnTheirWay);
        this.handle = handle;
        this.options = CreateOptions.newBuilder(acl, CreateMode.EPHEMERAL_SEQUENTIAL).build();
        this.alone = alone;
        this.children = children;
        this.delete = delete;
        this.timer = timer;
    }

    /** An entry on its way: {@code created} completes with it; {@code sent} once its create was handed to the session. */
    record Creation(CompletableFuture<Nodes.Created> created, CompletableFuture<Void> sent) {
    }

    /**
     * Creates a protected ephemeral sequential node {@code node} under {@code parent}. A read sent on
     * the session once {@code sent} completes (in the thread that completes it) reaches the server
     * behind the create.
     */
    Creation create(String parent, String node, byte[] data) {
        Create c = new Create(parent, node, data, UUID.randomUUID().toString());
        submit(c);
        return new Creation(c.result, c.sent);
    }

    /**
     * The parent: a {@code multi} is one transaction, so every node it creates has the same czxid, of
     * which a grant's token is made. Two entries of one queue (a lock's, a shared name's) never go in
     * one, so no two entries of one name share a czxid; entries of different names may, as their tokens
     * never meet.
     */
    @Override
    String key(Create write) {
        return write.parent;
    }

    @Override
    void send(List<Create> batch, Runnable answered) {
        if (batch.size() == 1) {
            Create c = batch.get(0);
            CompletableFuture<Nodes.Created> call = alone.create(c.parent, c.node, c.data);
            c.sent.complete(null);
            call.whenComplete((created, error) -> {
                answered.run();
                complete(c.result, created, error);
            });
            return;
        }
        List<Op> ops = new ArrayList<>(batch.size());
        for (Create c : batch) {
            ops.add(Op.create(c.path, c.data, options));
        }
        // The callback may run inside multi() (a path the client refuses, a handle already closed): the
        // flag keeps an exception from it from being taken for a call never sent.
        AtomicBoolean calledBack = new AtomicBoolean();
        try {
            ZooKeeper zk = handle.get();
            long session = zk.getSessionId();
            zk.multi(ops, (rc, path, ctx, results) -> {
                calledBack.set(true);
                answered.run();
                if (rc == KeeperException.Code.OK.intValue() && results != null && results.size() == batch.size()
                        && results.stream().allMatch(OpResult.CreateResult.class::isInstance)) {
                    for (int i = 0; i < batch.size(); i++) {
                        created(batch.get(i), (OpResult.CreateResult) results.get(i));
                    }
                } else if (rc != KeeperException.Code.OK.intValue() && results != null) {
                    refused(batch, results);
                } else {
                    log.debug("a multi of {} creates went unanswered ({}); looking for each entry",
                            batch.size(), KeeperException.Code.get(rc));
                    batch.forEach(c -> findOrSendAlone(c, session));
                }
            }, null);
        } catch (RuntimeException e) {
            if (!calledBack.get()) {
                // Nothing was sent (no handle, a closed client): no entry can exist.
                answered.run();
                batch.forEach(this::sendAlone);
            }
        } finally {
            batch.forEach(c -> c.sent.complete(null));
        }
    }

    /**
     * The server refused the {@code multi}, so nothing was created. It stops at the first op it refuses
     * (a missing parent, most often a name's first entry): the ops before it (results {@code OK}, undone)
     * had their parents, and wait again at the head of the queue to go together; the refused one and
     * those after it (results {@code RUNTIMEINCONSISTENCY}, never checked) go alone, which creates the
     * parents.
     */
    private void refused(List<Create> batch, List<OpResult> results) {
        int before = 0;
        while (before < batch.size() && before < results.size() && results.get(before) instanceof OpResult.ErrorResult error
                && error.getErr() == KeeperException.Code.OK.intValue()) {
            before++;
        }
        batch.subList(before, batch.size()).forEach(this::sendAlone);
        resubmitFirst(batch.subList(0, before));
    }

    private static void created(Create c, OpResult.CreateResult result) {
        Stat stat = result.getStat();
        c.result.complete(new Nodes.Created(result.getPath(), stat == null || stat.getCzxid() == 0 ? null : stat));
    }

    private void sendAlone(Create c) {
        alone.create(c.parent, c.node, c.data).whenComplete((created, error) -> complete(c.result, created, error));
    }

    /** After an unanswered multi sent in {@code session}: the entry if it was created, else a create alone. */
    private void findOrSendAlone(Create c, long session) {
        children.apply(c.parent).whenComplete((listed, error) -> {
            if (error != null) {
                c.result.completeExceptionally(error);
                removeLeftover(c, session);
                return;
            }
            String mine = mine(c, listed);
            if (mine != null) {
                c.result.complete(new Nodes.Created(c.parent + "/" + mine, null));
            } else {
                sendAlone(c);
            }
        });
    }

    /**
     * Deletes {@code c}'s entry should its unanswered multi have created it; tried again a second after
     * each failure while {@code session} (the one that sent it) lives: its end removes the entry.
     */
    private void removeLeftover(Create c, long session) {
        children.apply(c.parent).thenCompose(listed -> {
            String mine = mine(c, listed);
            return mine == null ? CompletableFuture.completedFuture(null) : delete.apply(c.parent + "/" + mine);
        }).whenComplete((done, error) -> {
            if (error == null) {
                return;
            }
            if (!sessionLives(session)) {
                log.debug("a leftover entry under {} went with its session", c.parent);
                return;
            }
            try {
                timer.schedule(() -> removeLeftover(c, session), 1, TimeUnit.SECONDS);
            } catch (RejectedExecutionException closed) {
                log.debug("no more tries to remove a leftover entry under {}: {}", c.parent, closed.getMessage());
            }
        });
    }

    /**
     * Whether the client's handle is still the one of {@code session} and not closed (a new session
     * follows an expired one; a closed client has none).
     */
    private boolean sessionLives(long session) {
        try {
            ZooKeeper zk = handle.get();
            return zk.getSessionId() == session && zk.getState().isAlive();
        } catch (RuntimeException closed) {
            return false;
        }
    }

    /** The child of {@code c}'s parent with its protected prefix, or null. */
    private static String mine(Create c, List<String> listed) {
        for (String child : listed) {
            if (child.startsWith(c.prefix)) {
                return child;
            }
        }
        return null;
    }


    static final class Create {
        final String parent;
        final String node;
        final byte[] data;
        /** The protected name's prefix, {@code _c_<uuid>-}. */
        final String prefix;
        /** The node's path before its sequence: {@code parent/_c_<uuid>-node}. */
        final String path;
        final CompletableFuture<Nodes.Created> result = new CompletableFuture<>();
        final CompletableFuture<Void> sent = new CompletableFuture<>();

        Create(String parent, String node, byte[] data, String id) {
            this.parent = parent;
            this.node = node;
            this.data = data;
            this.prefix = ProtectedUtils.getProtectedPrefix(id);
            this.path = parent + "/" + prefix + node;
        }
    }
}
