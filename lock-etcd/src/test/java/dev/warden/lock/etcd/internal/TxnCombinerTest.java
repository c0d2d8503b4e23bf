package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockConfig;
import dev.warden.testkit.EtcdServer;
import io.etcd.jetcd.api.Compare;
import io.etcd.jetcd.api.DeleteRangeRequest;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.PutRequest;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.RequestOp;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.TxnResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The combining of guarded write transactions, on a real etcd member. The member is paused while
 * the transactions are started, so the first is on its way (unanswered) and the others wait: which
 * ones then go together is decided, not left to timing.
 */
@DisplayName("etcd backend: write transactions started together go as one")
class TxnCombinerTest {

    private static EtcdServer server;

    private final String prefix = "combined-" + UUID.randomUUID().toString().substring(0, 8) + "/";
    private EtcdDriver driver;
    private long lease;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void close() {
        if (server.isPaused()) {
            server.resume();
        }
        if (driver != null) {
            driver.close();
        }
    }

    /** One call on its way at a time, so everything started meanwhile waits for it. */
    private TxnCombiner combiner(Duration timeout) throws Exception {
        driver = EtcdDriver.open(new LockConfig("etcd", List.of(server.endpoints()), "combined", Duration.ofSeconds(10),
                Duration.ofSeconds(20), Duration.ofSeconds(5), Map.of()));
        lease = driver.session().get(10, TimeUnit.SECONDS).leaseId();
        return new TxnCombiner(driver.calls(), timeout, 1);
    }

    private static ByteString bytes(String s) {
        return ByteString.copyFromUtf8(s);
    }

    /** Creates {@code key} on {@code lease} unless it exists, and reads it; reads it when it exists. */
    private static TxnRequest create(String key, long lease) {
        ByteString k = bytes(key);
        return TxnRequest.newBuilder()
                .addCompare(Compare.newBuilder().setKey(k).setTarget(Compare.CompareTarget.CREATE)
                        .setResult(Compare.CompareResult.EQUAL).setCreateRevision(0))
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(k).setValue(k).setLease(lease)))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(k)))
                .addFailure(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(k)))
                .build();
    }

    /** Starts {@code requests} while the member is paused: the first goes alone, the rest wait and go after it. */
    private List<CompletableFuture<TxnResponse>> startPaused(TxnCombiner c, List<TxnRequest> requests) {
        server.pause();
        List<CompletableFuture<TxnResponse>> started = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            started.add(c.txn("test " + i, requests.get(i)));
        }
        server.resume();
        return started;
    }

    private static TxnResponse get(CompletableFuture<TxnResponse> f) throws Exception {
        return f.get(15, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("twenty creates started while one is on its way go as one transaction; each gets its own responses")
    void combines() throws Exception {
        TxnCombiner c = combiner(Duration.ofSeconds(5));
        List<TxnRequest> requests = new ArrayList<>();
        for (int i = 0; i < 21; i++) {
            requests.add(create(prefix + i, lease));
        }
        List<CompletableFuture<TxnResponse>> started = startPaused(c, requests);
        for (int i = 0; i < 21; i++) {
            TxnResponse r = get(started.get(i));
            assertThat(r.getSucceeded()).as("member %d succeeded", i).isTrue();
            assertThat(r.getResponsesCount()).isEqualTo(2);
            KeyValue read = r.getResponses(1).getResponseRange().getKvs(0);
            assertThat(read.getKey().toStringUtf8()).isEqualTo(prefix + i);
            assertThat(read.getCreateRevision()).isEqualTo(r.getHeader().getRevision());
        }
        assertThat(c.combinedCalls()).isEqualTo(1);
        // The twenty waiting ones shared one revision: one transaction.
        assertThat(get(started.get(1)).getHeader().getRevision()).isEqualTo(get(started.get(20)).getHeader().getRevision())
                .isGreaterThan(get(started.get(0)).getHeader().getRevision());
        assertThat(server.count(prefix)).isEqualTo(21);
    }

    @Test
    @DisplayName("a member whose compare fails gets its own failure responses; the others are written")
    void compareFails() throws Exception {
        TxnCombiner c = combiner(Duration.ofSeconds(5));
        server.put(prefix + "taken", "someone else");
        List<CompletableFuture<TxnResponse>> started = startPaused(c, List.of(create(prefix + "first", lease),
                create(prefix + "a", lease), create(prefix + "taken", lease), create(prefix + "b", lease)));
        assertThat(get(started.get(0)).getSucceeded()).isTrue();
        assertThat(get(started.get(1)).getSucceeded()).isTrue();
        TxnResponse refused = get(started.get(2));
        assertThat(refused.getSucceeded()).isFalse();
        assertThat(refused.getResponses(0).getResponseRange().getKvs(0).getValue().toStringUtf8()).isEqualTo("someone else");
        assertThat(get(started.get(3)).getSucceeded()).isTrue();
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(server.keys(prefix)).containsExactlyInAnyOrder(prefix + "first", prefix + "a", prefix + "taken", prefix + "b");
    }

    @Test
    @DisplayName("a member etcd refuses (its lease is gone) fails alone; the others are written")
    void refusedMember() throws Exception {
        TxnCombiner c = combiner(Duration.ofSeconds(5));
        long noSuchLease = 0x7badbadbadbadL;
        List<CompletableFuture<TxnResponse>> started = startPaused(c, List.of(create(prefix + "first", lease),
                create(prefix + "a", lease), create(prefix + "orphan", noSuchLease), create(prefix + "b", lease)));
        assertThat(get(started.get(1)).getSucceeded()).isTrue();
        assertThat(get(started.get(3)).getSucceeded()).isTrue();
        assertThatThrownBy(() -> get(started.get(2))).isInstanceOf(ExecutionException.class)
                .satisfies(e -> assertThat(EtcdErrors.leaseNotFound(e)).as("lease not found: " + e).isTrue());
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(server.keys(prefix)).containsExactlyInAnyOrder(prefix + "first", prefix + "a", prefix + "b");
    }

    @Test
    @DisplayName("a delete and a create of the same key never go together, and go in the order started")
    void conflictsKeptApart() throws Exception {
        TxnCombiner c = combiner(Duration.ofSeconds(5));
        TxnResponse made = get(c.txn("make", create(prefix + "x", lease)));
        long old = made.getHeader().getRevision();
        TxnRequest delete = Requests.guardedDelete(bytes(prefix + "x"), old);
        List<CompletableFuture<TxnResponse>> started = startPaused(c, List.of(create(prefix + "first", lease),
                delete, create(prefix + "x", lease), create(prefix + "y", lease)));
        assertThat(get(started.get(1)).getSucceeded()).as("the delete").isTrue();
        TxnResponse again = get(started.get(2));
        assertThat(again.getSucceeded()).as("the create after it").isTrue();
        assertThat(again.getResponses(1).getResponseRange().getKvs(0).getCreateRevision()).isGreaterThan(old);
        assertThat(get(started.get(3)).getSucceeded()).isTrue();
        // The delete went alone; the create of x and the create of y together.
        assertThat(get(started.get(2)).getHeader().getRevision()).isEqualTo(get(started.get(3)).getHeader().getRevision())
                .isGreaterThan(get(started.get(1)).getHeader().getRevision());
        assertThat(c.combinedCalls()).isEqualTo(1);
    }

    @Test
    @DisplayName("a member whose deadline passed while it waited fails without being sent; the others go together")
    void expiredWhileWaiting() throws Exception {
        TxnCombiner c = combiner(Duration.ofSeconds(10));
        server.pause();
        List<CompletableFuture<TxnResponse>> started = new ArrayList<>();
        started.add(c.txn("first", create(prefix + "first", lease), Duration.ofMillis(1500)));
        started.add(c.txn("old", create(prefix + "old", lease), Duration.ofMillis(500)));
        for (int i = 0; i < 3; i++) {
            started.add(c.txn("young " + i, create(prefix + "young" + i, lease)));
        }
        // The first times out at 1.5 s; "old" has had no time left since 0.5 s and is not sent; the young ones go together.
        for (int i = 0; i < 2; i++) {
            CompletableFuture<TxnResponse> f = started.get(i);
            assertThatThrownBy(() -> get(f)).isInstanceOf(ExecutionException.class).hasCauseInstanceOf(LockException.class);
        }
        server.resume();
        for (int i = 2; i < 5; i++) {
            assertThat(get(started.get(i)).getSucceeded()).as("young member %d", i - 2).isTrue();
        }
        assertThat(c.combinedCalls()).isEqualTo(1);
        assertThat(server.keys(prefix)).doesNotContain(prefix + "old").contains(prefix + "young0", prefix + "young1", prefix + "young2");
    }

    @Test
    @DisplayName("a combined transaction whose answer never comes fails every member with the timeout")
    void unknownOutcome() throws Exception {
        TxnCombiner c = combiner(Duration.ofSeconds(10));
        server.pause();
        List<CompletableFuture<TxnResponse>> started = new ArrayList<>();
        // The first times out at 0.3 s; the other three then go together with 0.5 s left, and time out too.
        started.add(c.txn("first", create(prefix + "first", lease), Duration.ofMillis(300)));
        for (int i = 0; i < 3; i++) {
            started.add(c.txn("test " + i, create(prefix + i, lease), Duration.ofMillis(800)));
        }
        for (CompletableFuture<TxnResponse> f : started) {
            assertThatThrownBy(() -> get(f)).isInstanceOf(ExecutionException.class)
                    .hasCauseInstanceOf(LockException.class);
        }
        server.resume();
        assertThat(c.combinedCalls()).isEqualTo(1);
    }

    @Test
    @DisplayName("shapes: writes conflict with a write, a compare or a read range of the other; ranged deletes are not combined")
    void shapes() {
        TxnCombiner.Shape a = TxnCombiner.Shape.of(create("ns/a/1", 1));
        TxnCombiner.Shape b = TxnCombiner.Shape.of(create("ns/b/1", 1));
        assertThat(a.conflicts(b)).isFalse();
        assertThat(a.conflicts(TxnCombiner.Shape.of(create("ns/a/1", 2)))).isTrue();
        TxnRequest readsPrefix = TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(bytes("ns/c/1"))))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(bytes("ns/a/"))
                        .setRangeEnd(bytes("ns/a0")).setLimit(2))).build();
        assertThat(TxnCombiner.Shape.of(readsPrefix).conflicts(a)).isTrue();
        assertThat(TxnCombiner.Shape.of(readsPrefix).conflicts(b)).isFalse();
        TxnRequest readsToTheEnd = TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(bytes("a"))))
                .addCompare(Compare.newBuilder().setKey(bytes("ns/b/")).setRangeEnd(ByteString.copyFrom(new byte[] {0})))
                .build();
        assertThat(TxnCombiner.Shape.of(readsToTheEnd).conflicts(b)).isTrue();
        assertThat(TxnCombiner.Shape.of(readsToTheEnd).conflicts(a)).isFalse();
        TxnRequest rangedDelete = TxnRequest.newBuilder().addSuccess(RequestOp.newBuilder().setRequestDeleteRange(
                DeleteRangeRequest.newBuilder().setKey(bytes("ns/")).setRangeEnd(bytes("ns0")))).build();
        assertThat(TxnCombiner.Shape.of(rangedDelete)).isNull();
        TxnRequest readsAPage = TxnRequest.newBuilder()
                .addSuccess(RequestOp.newBuilder().setRequestPut(PutRequest.newBuilder().setKey(bytes("ns/c/1"))))
                .addSuccess(RequestOp.newBuilder().setRequestRange(RangeRequest.newBuilder().setKey(bytes("ns/c/"))
                        .setRangeEnd(bytes("ns/c0")).setLimit(500))).build();
        assertThat(TxnCombiner.Shape.of(readsAPage)).as("a page of 500 entries: its answer could be large").isNull();
        assertThat(TxnCombiner.Shape.of(readsAPage.toBuilder().setSuccess(1, RequestOp.newBuilder().setRequestRange(
                RangeRequest.newBuilder().setKey(bytes("ns/c/")).setRangeEnd(bytes("ns/c0")))).build()))
                .as("a range without a limit").isNull();
        assertThat(TxnCombiner.Shape.of(Requests.recheck(bytes("k"), 5, bytes("p/"), bytes("p0"), bytes("f")))).as("read-only").isNull();
    }
}
