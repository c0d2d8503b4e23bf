package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The driver's contender watch ({@code warden.lock.lease-cache}) against a real server: a holder's driver
 * watches, another driver (its own session) queues and leaves. What must not be reported is checked after
 * {@link #settled}: every watch event the holder's session was sent has been handled by then.
 */
@DisplayName("ZooKeeper contender watches")
class ContenderWatchesTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final long WAIT_SECONDS = 10;

    private ZooKeeperDriver holder;
    private ZooKeeperDriver other;
    /** One permit per report. */
    private final Semaphore asked = new Semaphore(0);

    @BeforeEach
    void open() {
        LockConfig config = new LockConfig("zookeeper", List.of(zookeeper.server().endpoint()), "contenders", TTL,
                Duration.ofSeconds(10), Duration.ofSeconds(10), Map.of());
        holder = ZooKeeperDriver.open(config);
        other = ZooKeeperDriver.open(config);
    }

    @AfterEach
    void close() {
        other.close();
        holder.close();
    }

    @Test
    @DisplayName("a watch set after a contender queued reports it by its first read, before it completes")
    void contenderQueuedBeforeTheWatch() throws Exception {
        Grant grant = grant(holder, "before");
        LockAttempt contender = queue("before");
        ContenderWatch watch = start("before", grant);
        assertThat(asked.availablePermits()).as("reports when the watch completed").isEqualTo(1);
        settled(holder);
        assertThat(asked.availablePermits()).as("reports, settled").isEqualTo(1);
        watch.close();
        get(contender.abandon());
        get(holder.release(grant));
    }

    @Test
    @DisplayName("the holder's own node and a contender that leaves are not reported; each new contender is, once")
    void newContendersOnly() throws Exception {
        Grant grant = grant(holder, "new");
        ContenderWatch watch = start("new", grant);
        settled(holder);
        assertThat(asked.availablePermits()).as("reports with only the holder's node queued").isZero();

        LockAttempt first = queue("new");
        assertThat(asked.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)).as("the first contender reported").isTrue();
        get(first.abandon());
        settled(holder);
        assertThat(asked.availablePermits()).as("reports of the first contender's leaving").isZero();

        LockAttempt second = queue("new");
        assertThat(asked.tryAcquire(WAIT_SECONDS, TimeUnit.SECONDS)).as("the second contender reported").isTrue();
        settled(holder);
        assertThat(asked.availablePermits()).as("reports of one contender").isZero();
        watch.close();
        get(second.abandon());
        get(holder.release(grant));
    }

    @Test
    @DisplayName("closed, it reports no contender")
    void closedReportsNothing() throws Exception {
        Grant grant = grant(holder, "closed");
        ContenderWatch watch = start("closed", grant);
        watch.close();
        watch.close();
        LockAttempt contender = queue("closed");
        settled(holder);
        assertThat(asked.availablePermits()).as("reports after close").isZero();
        get(contender.abandon());
        get(holder.release(grant));
    }

    @Test
    @DisplayName("a watch costs one read; closed, the hold's release fires it on the server and it is not set again")
    void oneReadPerHold() throws Exception {
        Grant grant = grant(holder, "cost");
        long before = requestsSubmitted(holder);
        ContenderWatch watch = start("cost", grant);
        assertThat(requestsSubmitted(holder) - before).as("requests to start the watch").isEqualTo(1);
        watch.close();
        assertThat(get(holder.release(grant))).isTrue();
        settled(holder);
        // The release's delete and the two reads that settle: no read of the queue behind them.
        assertThat(requestsSubmitted(holder) - before).as("requests after the release, settled").isEqualTo(4);
        assertThat(asked.availablePermits()).isZero();
    }

    @Test
    @DisplayName("a hold no longer on the server (its queue reaped, or not) is reported once, as asked, and watched no more")
    void holdGone() throws Exception {
        Grant grant = grant(holder, "gone");
        assertThat(get(holder.release(grant))).isTrue();
        ContenderWatch watch = start("gone", grant);
        assertThat(asked.availablePermits()).as("the hold gone behind the cache's back: another client may hold it").isEqualTo(1);
        Grant next = grant(other, "gone");
        settled(holder);
        assertThat(asked.availablePermits()).as("nothing more reported once the hold is gone").isEqualTo(1);
        watch.close();
        get(other.release(next));
    }

    @Test
    @DisplayName("a shared name's grant is refused with PROTOCOL")
    void sharedRefused() throws Exception {
        Grant shared = get(holder.attemptShared("shared", "owner", Share.READ).poll(TTL)).orElseThrow();
        assertThatThrownBy(() -> get(holder.watchContenders("shared", shared, asked::release)))
                .isInstanceOfSatisfying(LockException.class, e -> assertThat(e.reason()).isEqualTo(LockException.Reason.PROTOCOL));
        get(holder.release(shared));
    }

    @Test
    @DisplayName("a reservation moves the namespace's floor by the block, not by the czxid; the next grant is above the block")
    void reservationMovesTheFloorByTheBlock() throws Exception {
        Grant kept = grant(holder, "reserved");
        assertThat(get(holder.reserveTokens(kept, 1000))).isTrue();
        assertThat(get(holder.release(kept))).isTrue();
        Grant next = grant(other, "reserved");
        assertThat(next.fencingToken()).isGreaterThan(kept.fencingToken() + 999);
        assertThat(ZooKeeperGrant.of(next).floor()).isEqualTo(ZooKeeperGrant.of(kept).floor() + 999);
        assertThat(get(holder.reserveTokens(kept, 1000))).as("a grant that is gone reserves nothing, floor high enough or not").isFalse();
        assertThat(get(holder.reserveTokens(kept, 5000))).as("a grant that is gone moves the floor no further").isFalse();
        assertThat(ZooKeeperGrant.of(grant(holder, "after")).floor()).isEqualTo(ZooKeeperGrant.of(kept).floor() + 999);
        get(other.release(next));
    }

    private Grant grant(ZooKeeperDriver driver, String name) throws Exception {
        return get(driver.attempt(name, "owner").poll(TTL)).orElseThrow(() -> new AssertionError(name + " not granted"));
    }

    /** The other driver's entry, queued behind the holder. */
    private LockAttempt queue(String name) throws Exception {
        LockAttempt attempt = other.attempt(name, "contender");
        assertThat(get(attempt.poll(TTL))).as("the contender granted").isEmpty();
        return attempt;
    }

    private ContenderWatch start(String name, Grant grant) throws Exception {
        return get(holder.watchContenders(name, grant, asked::release));
    }

    /**
     * Two reads in a row on {@code driver}'s session. A watch event the server sent before the first was
     * handled (on the event thread, where its re-read is sent) before the first read's answer; the second
     * read's answer comes after that re-read's, whose report is made by then.
     */
    private static void settled(ZooKeeperDriver driver) throws Exception {
        get(driver.nodes().stat("/"));
        get(driver.nodes().stat("/"));
    }

    /** The next request id of the driver's ZooKeeper connection: one per request submitted, pings aside. */
    private static long requestsSubmitted(ZooKeeperDriver driver) throws Exception {
        String connection = driver.zooKeeper().toString();
        Matcher m = Pattern.compile(" xid:(\\d+)").matcher(connection);
        assertThat(m.find()).as(connection).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static <T> T get(CompletionStage<T> stage) throws Exception {
        try {
            return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }
}
