package dev.warden.lock.zookeeper.internal;

import org.apache.curator.framework.CuratorFramework;
import dev.warden.lock.tck.internal.Await;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The combining of queue entries' creates, on a real ZooKeeper server. The server is paused while the
 * creates are started, so the first is on its way (unanswered) and the others wait: which ones then go
 * together is decided, not left to timing. A lost reply is made by a handle that sends the multi and
 * then reports CONNECTIONLOSS instead of the server's answer.
 */
@DisplayName("ZooKeeper backend: queue entries created together go as one multi")
class CreateCombinerTest extends CombinerFixture {

    private static ScheduledExecutorService timer;

    private final AtomicInteger sentAlone = new AtomicInteger();
    private final AtomicInteger childrenReads = new AtomicInteger();
    /** How many of the next children reads fail, as a lost connection would. */
    private final AtomicInteger failingReads = new AtomicInteger();
    private ZooKeeper lostReplies;

    @BeforeAll
    static void startTimer() {
        timer = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterAll
    static void stopTimer() {
        timer.shutdownNow();
    }

    @AfterEach
    void closeLostReplies() throws Exception {
        if (server.isPaused()) {
            server.resume();
        }
        if (lostReplies != null) {
            lostReplies.close();
        }
    }

    /** One call on its way at a time, so everything started meanwhile waits for it. */
    private CreateCombiner combiner(Supplier<ZooKeeper> handle) {
        return new CreateCombiner(handle, ZooDefs.Ids.OPEN_ACL_UNSAFE, this::alone, this::children, this::delete, timer, 1);
    }

    /** A create alone, protected, creating the parents, as the driver's is. */
    private CompletableFuture<Nodes.Created> alone(String parentPath, String node, byte[] data) {
        sentAlone.incrementAndGet();
        CompletableFuture<Nodes.Created> result = new CompletableFuture<>();
        try {
            curator.create().storingStatIn(new Stat()).creatingParentContainersIfNeeded().withProtection()
                    .withMode(CreateMode.EPHEMERAL_SEQUENTIAL)
                    .inBackground((c, event) -> {
                        if (event.getResultCode() == 0) {
                            result.complete(new Nodes.Created(event.getName(), event.getStat()));
                        } else {
                            result.completeExceptionally(KeeperException.create(KeeperException.Code.get(event.getResultCode())));
                        }
                    }).forPath(parentPath + "/" + node, data);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private CompletableFuture<List<String>> children(String path) {
        childrenReads.incrementAndGet();
        if (failingReads.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return CompletableFuture.failedFuture(new KeeperException.ConnectionLossException());
        }
        CompletableFuture<List<String>> result = new CompletableFuture<>();
        try {
            curator.getChildren().inBackground((c, event) -> result.complete(
                    event.getResultCode() == KeeperException.Code.NONODE.intValue() ? List.of() : event.getChildren()))
                    .forPath(path);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private CompletableFuture<Void> delete(String path) {
        CompletableFuture<Void> result = new CompletableFuture<>();
        try {
            curator.delete().inBackground((c, event) -> result.complete(null)).forPath(path);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    /**
     * A handle whose multis go out on the test client's own session, as the driver's do, and reach the
     * server, but whose answers are lost: CONNECTIONLOSS is reported instead. (The handle has a session of
     * its own only because a ZooKeeper handle cannot be made without one; nothing is sent on it.)
     */
    private ZooKeeper lostReplies() throws Exception {
        ZooKeeper own = handle();
        lostReplies = new ZooKeeper(server.connectString(), 30_000, event -> { }) {
            @Override
            public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) {
                own.multi(ops, (rc, path, c, results) ->
                        cb.processResult(KeeperException.Code.CONNECTIONLOSS.intValue(), path, c, null), ctx);
            }

            @Override
            public long getSessionId() {
                return own.getSessionId();
            }

            @Override
            public States getState() {
                return own.getState();
            }
        };
        return lostReplies;
    }

    /** {@code count} queues (parents) under {@code parent}, created now. */
    private List<String> queues(int count) throws Exception {
        List<String> queues = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            queues.add(curator.create().forPath(parent + "/q" + i));
        }
        return queues;
    }

    /** Starts a queue entry's create under each of {@code queues}, in order, while the server is paused. */
    private List<CreateCombiner.Creation> startPaused(CreateCombiner c, List<String> queues) {
        server.pause();
        List<CreateCombiner.Creation> started = new ArrayList<>();
        for (int i = 0; i < queues.size(); i++) {
            started.add(c.create(queues.get(i), Paths.NODE, ("owner " + i).getBytes(StandardCharsets.UTF_8)));
        }
        server.resume();
        return started;
    }

    private int entries(List<String> queues) throws Exception {
        int entries = 0;
        for (String queue : queues) {
            entries += curator.getChildren().forPath(queue).size();
        }
        return entries;
    }

    private static Nodes.Created get(CreateCombiner.Creation creation) throws Exception {
        return creation.created().get(20, TimeUnit.SECONDS);
    }

    private static long sequence(Nodes.Created created) {
        OptionalLong sequence = Paths.sequence(Paths.nodeName(created.path()));
        assertThat(sequence).as("the sequence of %s", created.path()).isPresent();
        return sequence.getAsLong();
    }

    @Test
    @DisplayName("twenty creates in twenty queues started while one is on its way go as one multi: protected names, each with its stat and data")
    void combines() throws Exception {
        CreateCombiner c = combiner(this::handle);
        List<String> queues = queues(21);
        List<CreateCombiner.Creation> started = startPaused(c, queues);
        for (int i = 0; i < started.size(); i++) {
            Nodes.Created created = get(started.get(i));
            assertThat(created.path()).startsWith(queues.get(i) + "/_c_").contains("-" + Paths.NODE);
            assertThat(sequence(created)).isGreaterThanOrEqualTo(0);
            assertThat(created.stat()).as("the create's own answer carries the stat").isNotNull();
            assertThat(created.stat().getEphemeralOwner()).isEqualTo(handle().getSessionId());
            assertThat(new String(curator.getData().forPath(created.path()), StandardCharsets.UTF_8)).isEqualTo("owner " + i);
        }
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(sentAlone.get()).as("only the first went alone").isEqualTo(1);
        assertThat(get(started.get(1)).stat().getCzxid()).as("one multi, one transaction")
                .isEqualTo(get(started.get(20)).stat().getCzxid());
        assertThat(entries(queues)).isEqualTo(21);
    }

    @Test
    @DisplayName("two entries of one queue never go in one multi: they are numbered in the order started, with different czxids")
    void oneQueueApart() throws Exception {
        CreateCombiner c = combiner(this::handle);
        List<String> queues = queues(3);
        List<String> order = List.of(queues.get(0), queues.get(1), queues.get(2), queues.get(1), queues.get(2), queues.get(1));
        List<CreateCombiner.Creation> started = startPaused(c, order);
        List<Nodes.Created> created = new ArrayList<>();
        for (CreateCombiner.Creation creation : started) {
            created.add(get(creation));
        }
        assertThat(c.combinedCalls()).as("q1+q2, then q1+q2, then q1 alone").isEqualTo(2);
        assertThat(sequence(created.get(1))).isLessThan(sequence(created.get(3)));
        assertThat(sequence(created.get(3))).isLessThan(sequence(created.get(5)));
        assertThat(sequence(created.get(2))).isLessThan(sequence(created.get(4)));
        assertThat(created.stream().map(n -> n.stat().getCzxid()).filter(z -> z == created.get(1).stat().getCzxid()))
                .as("q1's first entry shares its czxid with q2's first only").hasSize(2);
        assertThat(created.get(1).stat().getCzxid()).isNotEqualTo(created.get(3).stat().getCzxid());
        assertThat(created.get(3).stat().getCzxid()).isNotEqualTo(created.get(5).stat().getCzxid());
    }

    @Test
    @DisplayName("a read sent when a combined create is sent lists its entry: it reaches the server behind the create")
    void readBehindTheCreate() throws Exception {
        CreateCombiner c = combiner(this::handle);
        List<String> queues = queues(3);
        server.pause();
        c.create(queues.get(0), Paths.NODE, new byte[0]);
        CreateCombiner.Creation waiting = c.create(queues.get(1), Paths.NODE, new byte[0]);
        CreateCombiner.Creation other = c.create(queues.get(2), Paths.NODE, new byte[0]);
        assertThat(waiting.sent()).as("waits while the first is on its way").isNotDone();
        CompletableFuture<List<String>> early = waiting.sent().thenCompose(sent -> {
            CompletableFuture<List<String>> read = new CompletableFuture<>();
            handle().getChildren(queues.get(1), false, (rc, path, ctx, children) -> read.complete(children), null);
            return read;
        });
        server.resume();
        Nodes.Created created = get(waiting);
        get(other);
        assertThat(early.get(20, TimeUnit.SECONDS)).contains(Paths.nodeName(created.path()));
        assertThat(c.combinedCalls()).isEqualTo(1);
    }

    @Test
    @DisplayName("a multi with a parent missing creates nothing: the creates before it go together again, it and those after it alone")
    void missingParent() throws Exception {
        CreateCombiner c = combiner(this::handle);
        String missing = parent + "/missing";
        List<String> queues = queues(3);
        server.pause();
        CreateCombiner.Creation first = c.create(parent, Paths.NODE, new byte[0]);
        List<CreateCombiner.Creation> started = new ArrayList<>();
        started.add(c.create(queues.get(0), Paths.NODE, new byte[0]));
        started.add(c.create(queues.get(1), Paths.NODE, new byte[0]));
        started.add(c.create(missing, Paths.NODE, new byte[0]));
        started.add(c.create(queues.get(2), Paths.NODE, new byte[0]));
        server.resume();
        get(first);
        assertThat(get(started.get(2)).path()).startsWith(missing + "/_c_");
        for (CreateCombiner.Creation creation : started) {
            assertThat(get(creation).stat()).isNotNull();
        }
        assertThat(c.combinedCalls()).as("the refused multi, then the two before the missing parent again").isEqualTo(2);
        assertThat(get(started.get(0)).stat().getCzxid()).as("together again").isEqualTo(get(started.get(1)).stat().getCzxid());
        assertThat(sentAlone.get()).as("the first, then the refused one and the one after it").isEqualTo(3);
        assertThat(childrenReads.get()).as("the server answered: nothing to look for").isZero();
        assertThat(curator.getChildren().forPath(missing)).hasSize(1);
        assertThat(entries(queues)).isEqualTo(3);
    }

    @Test
    @DisplayName("without a handle each create is sent alone")
    void noHandle() throws Exception {
        CreateCombiner c = combiner(() -> {
            throw new IllegalStateException("no ZooKeeper handle");
        });
        List<String> queues = queues(3);
        List<CreateCombiner.Creation> started = startPaused(c, queues);
        for (CreateCombiner.Creation creation : started) {
            get(creation);
            assertThat(creation.sent()).isDone();
        }
        assertThat(sentAlone.get()).isEqualTo(3);
        assertThat(childrenReads.get()).as("nothing was sent, so nothing is looked for").isZero();
        assertThat(entries(queues)).isEqualTo(3);
    }

    @Test
    @DisplayName("a multi whose answer is lost: each entry it created is found by its id and used, none created twice")
    void lostReplyFound() throws Exception {
        CreateCombiner c = combiner(lostRepliesHandle());
        List<String> queues = queues(4);
        List<CreateCombiner.Creation> started = startPaused(c, queues);
        for (int i = 0; i < started.size(); i++) {
            // The entry first, then the listing: a listing read before the look has answered may miss it.
            Nodes.Created created = get(started.get(i));
            assertThat(curator.getChildren().forPath(queues.get(i))).as("queue %d", i)
                    .containsExactly(Paths.nodeName(created.path()));
        }
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(sentAlone.get()).as("only the first went alone").isEqualTo(1);
        assertThat(childrenReads.get()).as("one look per entry of the multi").isEqualTo(3);
        assertThat(get(started.get(1)).stat()).as("found again: its stat is read later").isNull();
    }

    @Test
    @DisplayName("a multi that never reached the server: the entries are not found, and each is sent alone")
    void lostBeforeTheServer() throws Exception {
        ZooKeeper stale = new ZooKeeper(server.connectString(), 30_000, event -> { });
        stale.close();
        CreateCombiner c = combiner(() -> stale);
        List<String> queues = queues(3);
        List<CreateCombiner.Creation> started = startPaused(c, queues);
        for (CreateCombiner.Creation creation : started) {
            get(creation);
        }
        assertThat(sentAlone.get()).isEqualTo(3);
        assertThat(entries(queues)).isEqualTo(3);
    }

    @Test
    @DisplayName("when even the look fails, the attempt fails and the entry the lost multi created is deleted in the background")
    void lookFailsLeftoverRemoved() throws Exception {
        CreateCombiner c = combiner(lostRepliesHandle());
        List<String> queues = queues(2);
        server.pause();
        CreateCombiner.Creation first = c.create(parent, Paths.NODE, new byte[0]);
        CreateCombiner.Creation a = c.create(queues.get(0), Paths.NODE, new byte[0]);
        CreateCombiner.Creation b = c.create(queues.get(1), Paths.NODE, new byte[0]);
        failingReads.set(3);
        server.resume();
        Nodes.Created kept = get(first);
        assertThatThrownBy(() -> get(a)).hasCauseInstanceOf(KeeperException.ConnectionLossException.class);
        assertThatThrownBy(() -> get(b)).hasCauseInstanceOf(KeeperException.ConnectionLossException.class);
        Await.until(Duration.ofSeconds(20), "the lost multi's entries, deleted in the background", () -> {
            try {
                return entries(queues) == 0;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(curator.getChildren().forPath(parent)).contains(Paths.nodeName(kept.path()));
    }

    /** The combined multis go through a handle whose answers are lost; the first create goes alone. */
    private Supplier<ZooKeeper> lostRepliesHandle() throws Exception {
        ZooKeeper lost = lostReplies();
        return () -> lost;
    }
}
