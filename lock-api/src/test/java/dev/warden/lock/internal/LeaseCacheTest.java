package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.internal.config.ClientSettings;
import dev.warden.lock.internal.time.VirtualClock;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.TokenBlockDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease cache's rules on a virtual clock over a driver that only counts (pure logic: the kit's mode with
 * leases kept runs them against Redis): what is kept, for how long, how a block is used up and renewed, and
 * what a contender's word does.
 */
class LeaseCacheTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    private static final Duration LINGER = Duration.ofMillis(200);

    private final VirtualClock clock = new VirtualClock();
    private final KeepingDriver driver = new KeepingDriver();
    private final LockClient client = DefaultLockClient.open(DefaultLockClient.testParts(
            new ClientSettings(new LockConfig("keeping", List.of("keeping://test"), "test", TTL, Duration.ofSeconds(1),
                    Duration.ofSeconds(1), Map.of()), Duration.ofSeconds(30), Optional.empty(), 0, LINGER),
            driver, LockObserver.NONE, clock, LeakDetector.everySite(leak -> { })));

    @AfterEach
    void close() {
        client.close();
        assertThat(driver.watchesOpen).as("contender watches left open after close").isZero();
    }

    @Test
    @DisplayName("a release within the linger is kept: the next acquisition polls no server and gets the block's next token")
    void keptAndLentAgain() {
        Lease first = client.lock("a").acquire();
        assertThat(first.release()).isEqualTo(ReleaseOutcome.RELEASED);
        Lease again = client.lock("a").acquire();
        assertThat(driver.polls).isEqualTo(1);
        assertThat(driver.released).isEmpty();
        assertThat(again.fencingToken()).isEqualTo(first.fencingToken() + 1);
        assertThat(again.isValid()).isTrue();
        again.release();
    }

    @Test
    @DisplayName("a kept hold is released on the server when its linger ends, and the next acquisition polls again")
    void releasedAfterLinger() {
        client.lock("a").acquire().release();
        clock.advance(LINGER.minusMillis(1));
        assertThat(driver.released).isEmpty();
        clock.advance(Duration.ofMillis(1));
        assertThat(driver.released).hasSize(1);
        assertThat(driver.watchesOpen).as("the watch ends with the hold").isZero();
        client.lock("a").acquire().release();
        assertThat(driver.polls).isEqualTo(2);
    }

    @Test
    @DisplayName("a hold last confirmed a third of the TTL ago is not kept: its release goes to the server")
    void staleHoldNotKept() {
        Lease lease = client.lock("a").acquire();
        driver.failRenewals = true;
        clock.advance(TTL.dividedBy(3).plusMillis(1));
        assertThat(lease.isValid()).as("valid through a failed renewal").isTrue();
        lease.release();
        assertThat(driver.released).hasSize(1);
    }

    @Test
    @DisplayName("a block of tokens used up goes back to the server; tokens rise strictly throughout")
    void blockUsedUp() {
        long previous = 0;
        for (int i = 0; i < LeaseCache.TOKEN_BLOCK + 5; i++) {
            Lease lease = client.lock("a").acquire();
            assertThat(lease.fencingToken()).isGreaterThan(previous);
            previous = lease.fencingToken();
            lease.release();
        }
        assertThat(driver.polls).isEqualTo(2);
        assertThat(driver.released).hasSize(1);
    }

    @Test
    @DisplayName("a contender's word releases a kept hold at once, and a lent one at its release")
    void askedReleases() {
        client.lock("a").acquire().release();
        driver.ask("a");
        assertThat(driver.released).hasSize(1);

        Lease held = client.lock("a").acquire();
        assertThat(driver.polls).isEqualTo(2);
        driver.ask("a");
        assertThat(driver.released).hasSize(1);
        held.release();
        assertThat(driver.released).hasSize(2);
        client.lock("a").acquire().release();
        assertThat(driver.polls).as("not lent again after the contender asked").isEqualTo(3);
    }

    @Test
    @DisplayName("a waiter of the same client gets the next token with no server call; a used-up block is handed on by the server")
    void localWaiterHandedOn() throws Exception {
        Lease held = client.lock("a").acquire();
        CompletableFuture<Lease> waiter = client.lock("a").acquireAsync();
        held.release();
        Lease next = waiter.get(1, TimeUnit.SECONDS);
        assertThat(next.fencingToken()).isEqualTo(held.fencingToken() + 1);
        assertThat(driver.handOffs).isZero();
        assertThat(driver.polls).isEqualTo(1);
        next.release();
    }

    @Test
    @DisplayName("the first release waits for the watch on contenders; a watch that fails keeps nothing")
    void watchFirst() {
        driver.watchAnswer = new CompletableFuture<>();
        Lease lease = client.lock("a").acquire();
        CompletableFuture<ReleaseOutcome> released = lease.releaseAsync().toCompletableFuture();
        assertThat(released).isNotDone();
        driver.watchAnswer.completeExceptionally(new IllegalStateException("no subscription"));
        assertThat(released).isCompletedWithValue(ReleaseOutcome.RELEASED);
        assertThat(driver.released).hasSize(1);
    }

    @Test
    @DisplayName("closing the client releases every kept hold")
    void closeReleases() {
        client.lock("a").acquire().release();
        client.lock("b").acquire().release();
        client.close();
        assertThat(driver.released).hasSize(2);
        assertThat(driver.watchesOpen).isZero();
    }

    /** Grants every poll with a block of tokens, confirms every call, and lets the test be the contender. */
    private static final class KeepingDriver implements TokenBlockDriver {

        record Block(String name, long fencingToken) implements Grant {
        }

        int polls;
        int handOffs;
        int watchesOpen;
        boolean failRenewals;
        long fence;
        CompletableFuture<ContenderWatch> watchAnswer;
        final List<Grant> released = new ArrayList<>();
        final Map<String, Runnable> contenders = new java.util.HashMap<>();

        void ask(String name) {
            contenders.get(name).run();
        }

        @Override
        public LockAttempt attemptReserving(String name, String owner, int tokens) {
            return new LockAttempt() {
                @Override
                public CompletionStage<Optional<Grant>> poll(Duration ttl) {
                    polls++;
                    Block b = new Block(name, fence + 1);
                    fence += tokens;
                    return CompletableFuture.completedFuture(Optional.of(b));
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
        public LockAttempt attempt(String name, String owner) {
            return attemptReserving(name, owner, 1);
        }

        @Override
        public CompletionStage<HandOff> handOffReserving(Grant grant, String owner, Duration ttl, int tokens) {
            handOffs++;
            Block b = new Block(((Block) grant).name(), fence + 1);
            fence += tokens;
            return CompletableFuture.completedFuture(HandOff.to(b));
        }

        @Override
        public CompletionStage<HandOff> handOff(Grant grant, String owner, Duration ttl) {
            return handOffReserving(grant, owner, ttl, 1);
        }

        @Override
        public long lastReserved(Grant grant) {
            return grant.fencingToken() + LeaseCache.TOKEN_BLOCK - 1;
        }

        @Override
        public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
            contenders.put(name, asked);
            ContenderWatch w = () -> watchesOpen--;
            // A watch that could not be set up leaves nothing open (the Redis driver leaves its channel again).
            CompletableFuture<ContenderWatch> answer = watchAnswer != null ? watchAnswer.thenApply(x -> w)
                    : CompletableFuture.completedFuture(w);
            return answer.thenApply(opened -> {
                watchesOpen++;
                return opened;
            });
        }

        @Override
        public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
            return failRenewals ? CompletableFuture.failedFuture(new java.io.IOException("scripted: unreachable"))
                    : CompletableFuture.completedFuture(true);
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
