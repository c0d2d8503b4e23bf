package dev.warden.lock.zookeeper.internal;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The combining of versioned deletes, on a real ZooKeeper server. The server is paused while the
 * deletes are started, so the first is on its way (unanswered) and the others wait: which ones then
 * go together is decided, not left to timing.
 */
@DisplayName("ZooKeeper backend: deletes started together go as one multi")
class DeleteCombinerTest extends CombinerFixture {

    private final AtomicInteger sentAlone = new AtomicInteger();

    /** One call on its way at a time, so everything started meanwhile waits for it. */
    private DeleteCombiner combiner() {
        return new DeleteCombiner(this::handle, this::alone, 1);
    }

    private CompletableFuture<KeeperException.Code> alone(String path, int version) {
        sentAlone.incrementAndGet();
        CompletableFuture<KeeperException.Code> result = new CompletableFuture<>();
        try {
            curator.delete().withVersion(version).inBackground((c, event) ->
                    result.complete(KeeperException.Code.get(event.getResultCode()))).forPath(path);
        } catch (Exception e) {
            result.completeExceptionally(e);
        }
        return result;
    }

    private String node(String name) throws Exception {
        return curator.create().withMode(CreateMode.PERSISTENT).forPath(parent + "/" + name);
    }

    /** Starts the deletes of {@code paths} (at version 0) while the server is paused. */
    private List<CompletableFuture<KeeperException.Code>> startPaused(DeleteCombiner c, List<String> paths, int... versions) {
        server.pause();
        List<CompletableFuture<KeeperException.Code>> started = new ArrayList<>();
        for (int i = 0; i < paths.size(); i++) {
            started.add(c.delete(paths.get(i), versions.length > i ? versions[i] : 0));
        }
        server.resume();
        return started;
    }

    private static KeeperException.Code get(CompletableFuture<KeeperException.Code> f) throws Exception {
        return f.get(20, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("twenty deletes started while one is on its way go as one multi, and every node is gone")
    void combines() throws Exception {
        DeleteCombiner c = combiner();
        List<String> paths = new ArrayList<>();
        for (int i = 0; i < 21; i++) {
            paths.add(node("n" + i));
        }
        List<CompletableFuture<KeeperException.Code>> started = startPaused(c, paths);
        for (CompletableFuture<KeeperException.Code> f : started) {
            assertThat(get(f)).isEqualTo(KeeperException.Code.OK);
        }
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(sentAlone.get()).as("only the first went alone").isEqualTo(1);
        assertThat(curator.getChildren().forPath(parent)).isEmpty();
    }

    @Test
    @DisplayName("a delete whose node is gone or changed fails the multi: each is sent alone and says which")
    void oneFails() throws Exception {
        DeleteCombiner c = combiner();
        String first = node("first");
        String a = node("a");
        String changed = node("changed");
        curator.setData().forPath(changed, new byte[] {1});
        String gone = parent + "/gone";
        String b = node("b");
        List<CompletableFuture<KeeperException.Code>> started = startPaused(c, List.of(first, a, changed, gone, b));
        assertThat(get(started.get(0))).isEqualTo(KeeperException.Code.OK);
        assertThat(get(started.get(1))).isEqualTo(KeeperException.Code.OK);
        assertThat(get(started.get(2))).isEqualTo(KeeperException.Code.BADVERSION);
        assertThat(get(started.get(3))).isEqualTo(KeeperException.Code.NONODE);
        assertThat(get(started.get(4))).isEqualTo(KeeperException.Code.OK);
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(sentAlone.get()).as("the first, then the four of the failed multi").isEqualTo(5);
        assertThat(curator.getChildren().forPath(parent)).containsExactly("changed");
    }

    @Test
    @DisplayName("the same path twice never goes in one multi; the second delete finds the node gone")
    void samePathApart() throws Exception {
        DeleteCombiner c = combiner();
        String first = node("first");
        String x = node("x");
        String y = node("y");
        List<CompletableFuture<KeeperException.Code>> started = startPaused(c, List.of(first, x, y, x));
        assertThat(get(started.get(1))).isEqualTo(KeeperException.Code.OK);
        assertThat(get(started.get(2))).isEqualTo(KeeperException.Code.OK);
        assertThat(get(started.get(3))).isEqualTo(KeeperException.Code.NONODE);
        assertThat(c.combinedCalls()).as("x and y together; the second x after them").isEqualTo(1);
    }

    @Test
    @DisplayName("without a handle (no connection) each delete is sent alone")
    void noHandle() throws Exception {
        String first = node("first");
        String a = node("a");
        String b = node("b");
        DeleteCombiner c = new DeleteCombiner(() -> {
            throw new IllegalStateException("no ZooKeeper handle");
        }, this::alone, 1);
        List<CompletableFuture<KeeperException.Code>> started = startPaused(c, List.of(first, a, b));
        for (CompletableFuture<KeeperException.Code> f : started) {
            assertThat(get(f)).isEqualTo(KeeperException.Code.OK);
        }
        assertThat(sentAlone.get()).isEqualTo(3);
        assertThat(curator.getChildren().forPath(parent)).isEmpty();
    }

    @Test
    @DisplayName("a handle whose session is gone fails the multi; each delete is sent alone through the live client")
    void closedHandle() throws Exception {
        String first = node("first");
        String a = node("a");
        String b = node("b");
        ZooKeeper stale = new ZooKeeper(server.connectString(), 30_000, event -> { });
        stale.close();
        DeleteCombiner c = new DeleteCombiner(() -> stale, this::alone, 1);
        List<CompletableFuture<KeeperException.Code>> started = startPaused(c, List.of(first, a, b));
        for (CompletableFuture<KeeperException.Code> f : started) {
            assertThat(get(f)).isEqualTo(KeeperException.Code.OK);
        }
        assertThat(sentAlone.get()).isEqualTo(3);
    }
}
