package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.internal.config.ClientSettings;
import dev.warden.lock.internal.time.VirtualClock;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.TokenFloorDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease cache over a driver whose grants reserve nothing (etcd, ZooKeeper, JDBC, memory): the cache
 * reserves each hold's block by raising the token floor before the first re-grant, on a virtual clock over a
 * driver that only counts (pure logic: the kit's mode with leases kept runs it against each real backend).
 */
class LeaseCacheOverFloorTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    private static final Duration LINGER = Duration.ofMillis(200);

    private final VirtualClock clock = new VirtualClock();
    private final FloorDriver driver = new FloorDriver();
    private final LockClient client = DefaultLockClient.open(DefaultLockClient.testParts(
            new ClientSettings(new LockConfig("floor", List.of("floor://test"), "test", TTL, Duration.ofSeconds(1),
                    Duration.ofSeconds(1), Map.of()), Duration.ofSeconds(30), Optional.empty(), 0, LINGER),
            driver, LockObserver.NONE, clock, LeakDetector.everySite(leak -> { })));

    @AfterEach
    void close() {
        client.close();
        assertThat(driver.watchesOpen).as("contender watches left open after close").isZero();
    }

    @Test
    @DisplayName("the first release raises the floor above the block before the hold is kept; re-grants take its tokens; "
            + "the next server grant is above them all")
    void floorRaisedBeforeFirstRegrant() {
        Lease first = client.lock("a").acquire();
        assertThat(driver.floor).as("nothing reserved before the first release").isZero();
        assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(driver.floor).isEqualTo(first.fencingToken() + LeaseCache.TOKEN_BLOCK - 1);
        assertThat(driver.released).isEmpty();
        long last = first.fencingToken();
        for (int i = 0; i < 5; i++) {
            Lease again = client.lock("a").acquire();
            assertThat(again.fencingToken()).isEqualTo(last + 1);
            last = again.fencingToken();
            again.release();
        }
        assertThat(driver.polls).isEqualTo(1);
        assertThat(driver.raises).as("one reservation per server grant").isEqualTo(1);
        clock.advance(LINGER);
        assertThat(driver.released).hasSize(1);
        Lease fromServer = client.lock("a").acquire();
        assertThat(fromServer.fencingToken()).isGreaterThan(driver.floor).isGreaterThan(last);
        fromServer.release();
    }

    @Test
    @DisplayName("a floor that could not be raised keeps nothing: the release goes to the server")
    void floorNotRaisedKeepsNothing() {
        driver.raiseAnswer = CompletableFuture.failedFuture(new IllegalStateException("scripted: unreachable"));
        client.lock("a").acquire().release();
        assertThat(driver.released).hasSize(1);
        driver.raiseAnswer = CompletableFuture.completedFuture(false);
        client.lock("a").acquire().release();
        assertThat(driver.released).as("the grant was gone when the floor was to rise").hasSize(2);
        client.lock("a").acquire().release();
        assertThat(driver.polls).isEqualTo(3);
    }

    @Test
    @DisplayName("a waiter of the same client at the first release gets the block's next token once the floor is up, "
            + "with no server poll; a used-up block is released and its waiter polls the server")
    void localWaiter() throws Exception {
        Lease held = client.lock("a").acquire();
        CompletableFuture<Lease> waiter = client.lock("a").acquireAsync();
        held.release();
        Lease next = waiter.get(1, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isEqualTo(held.fencingToken() + 1);
        assertThat(driver.floor).isEqualTo(held.fencingToken() + LeaseCache.TOKEN_BLOCK - 1);
        assertThat(driver.polls).isEqualTo(1);
        next.release();

        long previous = next.fencingToken();
        for (int i = 0; i < LeaseCache.TOKEN_BLOCK; i++) {
            Lease lease = client.lock("a").acquire();
            assertThat(lease.fencingToken()).isGreaterThan(previous);
            previous = lease.fencingToken();
            lease.release();
        }
        assertThat(driver.polls).as("a second server grant once the block was used up").isEqualTo(2);
        assertThat(driver.released).hasSize(1);
    }

    @Test
    @DisplayName("a contender the watch finds keeps the hold from being kept, and the name's next grant within the linger too")
    void contenderAtWatchStart() {
        driver.contenderWaiting = true;
        Lease first = client.lock("a").acquire();
        first.release();
        assertThat(driver.released).hasSize(1);
        assertThat(driver.raises).as("no block reserved for a contended hold").isZero();
        driver.contenderWaiting = false;
        client.lock("a").acquire().release();
        assertThat(driver.released).as("granted shortly after a contender asked: not kept").hasSize(2);
        clock.advance(LINGER);
        client.lock("a").acquire().release();
        assertThat(driver.released).as("kept once the contender is a linger time old").hasSize(2);
        assertThat(driver.raises).isEqualTo(1);
    }

    @Test
    @DisplayName("a contender that asks while the block is being reserved, or a close then, keeps nothing")
    void askedOrClosedWhileReserving() {
        driver.raiseAnswer = new CompletableFuture<>();
        CompletableFuture<ReleaseOutcome> released = client.lock("a").acquire().releaseAsync().toCompletableFuture();
        assertThat(released).isNotDone();
        driver.contenders.get("a").run();
        driver.raiseAnswer.complete(true);
        assertThat(released).isCompletedWithValue(ReleaseOutcome.RELEASED);
        assertThat(driver.released).as("released on the server, not kept").hasSize(1);

        clock.advance(LINGER);
        driver.raiseAnswer = new CompletableFuture<>();
        CompletableFuture<ReleaseOutcome> second = client.lock("b").acquire().releaseAsync().toCompletableFuture();
        CompletableFuture<Void> closed = CompletableFuture.runAsync(client::close);
        driver.raiseAnswer.complete(true);
        closed.join();
        assertThat(second).isCompletedWithValue(ReleaseOutcome.RELEASED);
        assertThat(driver.released).as("the second hold released by the close").hasSize(2);
    }

    /** Grants every poll with the next counter value above the floor; raises the floor when asked; no hand-off. */
    private static final class FloorDriver implements LeaseCachingDriver, TokenFloorDriver {

        record Counted(String name, long fencingToken) implements Grant {
        }

        int polls;
        int raises;
        int watchesOpen;
        long counter;
        long floor;
        boolean contenderWaiting;
        CompletableFuture<Boolean> raiseAnswer;
        final List<Grant> released = new ArrayList<>();
        final Map<String, Runnable> contenders = new HashMap<>();

        @Override
        public LockAttempt attempt(String name, String owner) {
            return new LockAttempt() {
                @Override
                public CompletionStage<Optional<Grant>> poll(Duration ttl) {
                    polls++;
                    counter++;
                    return CompletableFuture.completedFuture(Optional.of(new Counted(name, floor + counter)));
                }

                @Override
                public CompletionStage<Void> changed() {
                    return new CompletableFuture<>();
                }

                @Override
                public CompletionStage<Void> abandon() {
                    return CompletableFuture.completedFuture(null);
                }
            };
        }

        @Override
        public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long value) {
            if (raiseAnswer != null) {
                return raiseAnswer;
            }
            raises++;
            floor = Math.max(floor, value);
            return CompletableFuture.completedFuture(true);
        }

        @Override
        public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
            contenders.put(name, asked);
            watchesOpen++;
            if (contenderWaiting) {
                asked.run();
            }
            boolean[] closed = new boolean[1];
            return CompletableFuture.completedFuture(() -> {
                if (!closed[0]) {
                    closed[0] = true;
                    watchesOpen--;
                }
            });
        }

        @Override
        public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
            return CompletableFuture.completedFuture(true);
        }

        @Override
        public CompletionStage<Boolean> release(Grant grant) {
            released.add(grant);
            return CompletableFuture.completedFuture(true);
        }

        @Override
        public void close() {
        }
    }
}
