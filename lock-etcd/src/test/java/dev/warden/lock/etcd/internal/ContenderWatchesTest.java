package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.EtcdServer;
import io.etcd.jetcd.api.CompactionRequest;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The etcd driver's side of lease caching on a real etcd member: the watch on a kept lock's contenders
 * ({@link ContenderWatches}) — what it reports (entries created behind the holder, also before the watch
 * started), what it does not (the holder's own key, re-puts, deletions), a compacted start, shares, its cost
 * and its cancel on the server — and the freshness of a grant the client may keep.
 */
@DisplayName("etcd backend: lease caching through the driver")
class ContenderWatchesTest {

    /** Long enough that no keep-alive runs while a test counts the server's calls. */
    private static final Duration TTL = Duration.ofSeconds(60);
    /** How long anything that should happen may take. */
    private static final Duration SOON = Duration.ofSeconds(10);

    private static EtcdServer server;

    private final String namespace = "watch-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<EtcdDriver> drivers = new ArrayList<>();
    private final List<ContenderWatch> watches = new ArrayList<>();
    private final AtomicInteger asked = new AtomicInteger();

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
    void closeAll() {
        watches.forEach(ContenderWatch::close);
        drivers.forEach(EtcdDriver::close);
    }

    private EtcdDriver driver() {
        return driver(TTL);
    }

    private EtcdDriver driver(Duration ttl) {
        EtcdDriver d = EtcdDriver.open(new LockConfig("etcd", List.of(server.endpoints()), namespace, ttl,
                Duration.ofSeconds(20), Duration.ofSeconds(2), Map.of()));
        drivers.add(d);
        return d;
    }

    private static Grant grant(EtcdDriver d, String name) throws Exception {
        return await(d.attempt(name, "holder").poll(TTL)).orElseThrow(() -> new AssertionError(name + " is held"));
    }

    /** An attempt whose first poll queued it behind the holder. */
    private static LockAttempt queued(EtcdDriver d, String name) throws Exception {
        LockAttempt a = d.attempt(name, "contender");
        assertThat(await(a.poll(TTL))).as("queued behind the holder").isEmpty();
        return a;
    }

    private ContenderWatch watch(EtcdDriver d, String name, Grant g) throws Exception {
        ContenderWatch w = await(d.watchContenders(name, g, asked::incrementAndGet));
        watches.add(w);
        return w;
    }

    @Test
    @DisplayName("a reservation moves the namespace's floor by the block, not by the revision; the next grant is above the block")
    void reservationMovesTheFloorByTheBlock() throws Exception {
        EtcdDriver holder = driver();
        EtcdDriver other = driver();
        EtcdGrant kept = (EtcdGrant) grant(holder, "reserved");
        assertThat(await(holder.reserveTokens(kept, 1000))).isTrue();
        assertThat(await(holder.release(kept))).isTrue();
        EtcdGrant next = (EtcdGrant) grant(other, "reserved");
        assertThat(next.fencingToken()).isGreaterThan(kept.fencingToken() + 999);
        assertThat(next.floor()).isEqualTo(kept.floor() + 999);
        assertThat(await(holder.reserveTokens(kept, 1000))).as("a grant that is gone reserves nothing, floor high enough or not").isFalse();
        assertThat(await(holder.reserveTokens(kept, 5000))).as("a grant that is gone moves the floor no further").isFalse();
        assertThat(((EtcdGrant) grant(holder, "after")).floor()).isEqualTo(kept.floor() + 999);
        await(other.release(next));
    }

    @Test
    @DisplayName("a contender queued before the watch started is reported by the time the watch is in place, at the cost of one read")
    void queuedBeforeTheWatch() throws Exception {
        EtcdDriver holder = driver();
        EtcdDriver other = driver();
        Grant g = grant(holder, "early");
        queued(other, "early");
        Map<String, Long> before = calls();
        watch(holder, "early", g);
        assertThat(asked).as("reported once the watch is in place").hasPositiveValue();
        assertThat(since(before)).as("the watch and one read of what it replays").isEqualTo(Map.of("Watch", 1L, "Range", 1L));
    }

    @Test
    @DisplayName("a watch with nothing written since the grant costs one watch and no read; a contender queued later is reported")
    void queuedAfterTheWatch() throws Exception {
        EtcdDriver holder = driver();
        EtcdDriver other = driver();
        Grant g = grant(holder, "later");
        Map<String, Long> before = calls();
        watch(holder, "later", g);
        assertThat(since(before)).as("calls for the watch").isEqualTo(Map.of("Watch", 1L));
        assertThat(asked).as("nobody queued yet").hasValue(0);
        LockAttempt a = queued(other, "later");
        Await.until(SOON, "the contender is reported", () -> asked.get() == 1);
        await(a.abandon());
        assertThat(await(holder.release(g))).isTrue();
    }

    @Test
    @DisplayName("a re-put, another entry's deletion and the holder's own key written again are not contenders; the "
            + "holder's own key deleted behind its back is reported")
    void onlyCreationsOfOthersAndTheHoldersLoss() throws Exception {
        EtcdDriver holder = driver();
        String name = "quiet";
        EtcdGrant g = (EtcdGrant) grant(holder, name);
        String prefix = Keys.queuePrefix(namespace, name);
        watch(holder, name, g);
        server.put(prefix + "first", "someone first");
        Await.until(SOON, "the first entry created behind the holder is reported", () -> asked.get() == 1);

        server.put(prefix + "first", "someone first again");
        assertThat(server.delete(prefix + "first")).isTrue();
        server.put(g.key(), "the holder's own key written again");
        // One stream, in revision order: once this one is reported, every write above was seen.
        assertThat(server.delete(g.key())).isTrue();
        Await.until(SOON, "the holder's own key deleted behind its back is reported", () -> asked.get() >= 2);
        assertThat(asked).as("the writes before it reported nothing").hasValue(2);
    }

    @Test
    @DisplayName("a start revision already compacted is taken as asked, not as an error")
    void compactedStart() throws Exception {
        EtcdDriver holder = driver();
        Grant g = grant(holder, "compacted");
        for (int i = 0; i < 3; i++) {
            server.put(Keys.encode(namespace) + "/!unrelated", "write " + i);
        }
        long now = await(holder.calls().unary("a read", KVGrpc.getRangeMethod(),
                RangeRequest.newBuilder().setKey(Requests.bytes("x")).build())).getHeader().getRevision();
        await(holder.calls().unary("a compaction", KVGrpc.getCompactMethod(),
                CompactionRequest.newBuilder().setRevision(now).setPhysical(true).build()));
        ContenderWatch w = watch(holder, "compacted", g);
        Await.until(SOON, "the compacted watch reports a contender", () -> asked.get() > 0);
        w.close();
        w.close();
        assertThat(await(holder.release(g))).as("the hold itself is untouched").isTrue();
    }

    @Test
    @DisplayName("closing the watch cancels it on the server (idempotent); shares and a closed driver are refused")
    void closeAndRefusals() throws Exception {
        assertThat(server.isManaged()).as("this test reads the server's gauges: unset WARDEN_ETCD_ENDPOINTS").isTrue();
        EtcdDriver holder = driver();
        Await.until(SOON, "no watch left by earlier tests", () -> gauge("etcd_debugging_mvcc_watcher_total") == 0);
        Grant g = grant(holder, "closed");
        ContenderWatch w = watch(holder, "closed", g);
        assertThat(gauge("etcd_debugging_mvcc_watcher_total")).as("the watch on the server").isEqualTo(1);
        w.close();
        w.close();
        Await.until(SOON, "the watch is cancelled on the server", () -> gauge("etcd_debugging_mvcc_watcher_total") == 0);

        Grant share = await(holder.attemptShared("closed", "reader", Share.READ).poll(TTL)).orElseThrow();
        assertThatThrownBy(() -> await(holder.watchContenders("closed", share, asked::incrementAndGet)))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.PROTOCOL));
        assertThatThrownBy(() -> await(holder.watchContenders("another", g, asked::incrementAndGet)))
                .as("a grant of another lock").isInstanceOf(ExecutionException.class).cause()
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.PROTOCOL));
        holder.close();
        assertThatThrownBy(() -> await(holder.watchContenders("closed", g, asked::incrementAndGet)))
                .isInstanceOf(ExecutionException.class).cause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
        assertThat(asked).hasValue(0);
    }

    @Test
    @DisplayName("a grant the client may keep counts from a keep-alive sent with its poll once the session's last is"
            + " older than a sixth of the TTL; any other grant counts from the session's last")
    void keptGrantIsFresh() throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        long sixth = ttl.toNanos() / EtcdAttempt.CONFIRM_KEPT_AFTER;
        // The session's own keep-alive goes a third of the TTL after the last was answered: none meanwhile.
        long latest = ttl.toNanos() / 3 - TimeUnit.MILLISECONDS.toNanos(150);
        for (boolean kept : new boolean[] {true, false}) {
            // A driver each: a keep-alive sent with a poll moves the session's last, not its schedule.
            EtcdDriver d = driver(ttl);
            Session s = await(d.session());
            Await.until(SOON, "the session's last keep-alive older than a sixth of the TTL, the next not due", () -> {
                long age = System.nanoTime() - s.confirmedSentAt();
                return age > sixth + TimeUnit.MILLISECONDS.toNanos(20) && age < latest;
            });
            long pollSent = System.nanoTime();
            LockAttempt a = kept ? d.attemptKept("fresh-" + kept, "holder") : d.attempt("fresh-" + kept, "holder");
            EtcdGrant g = (EtcdGrant) await(a.poll(ttl)).orElseThrow();
            if (kept) {
                assertThat(g.leaseConfirmedSentAt() - pollSent).as("confirmed by a keep-alive sent with the poll").isNotNegative();
            } else {
                assertThat(pollSent - g.leaseConfirmedSentAt()).as("counted from the session's last keep-alive").isGreaterThan(sixth);
            }
            assertThat(await(d.release(g))).isTrue();
        }
    }

    private static <T> T await(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(SOON.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The calls the server received since {@code before}, by method. */
    private static Map<String, Long> since(Map<String, Long> before) {
        Map<String, Long> made = new TreeMap<>();
        calls().forEach((method, n) -> {
            long diff = n - before.getOrDefault(method, 0L);
            if (diff > 0) {
                made.put(method, diff);
            }
        });
        return made;
    }

    /** One of etcd's gauges. */
    private static long gauge(String name) {
        for (String line : metrics().split("\n")) {
            if (line.startsWith(name + " ")) {
                return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("etcd has no metric " + name);
    }

    /** etcd's count of calls started, by method (as EtcdSharedTest reads it). */
    private static Map<String, Long> calls() {
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : metrics().split("\n")) {
            if (line.startsWith("grpc_server_started_total{")) {
                int at = line.indexOf("grpc_method=\"") + "grpc_method=\"".length();
                String method = line.substring(at, line.indexOf('"', at));
                calls.merge(method, (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Long::sum);
            }
        }
        return calls;
    }

    private static String metrics() {
        try {
            return HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                            URI.create(server.clientUrls().get(0) + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
