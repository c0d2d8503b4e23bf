package dev.warden.lock.internal.migration;

import dev.warden.lock.LockException;
import dev.warden.lock.internal.time.VirtualClock;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.TokenFloorDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The hand-over of a migrating acquisition on a virtual clock: the first backend's grant is kept alive
 * until the token floor is in place, and the grant handed over counts from its last confirmed renewal.
 */
class MigratingAttemptTest {

    private static final Duration TTL = Duration.ofSeconds(3);
    private static final String NAME = "orders";

    /** A grant of one lock on one fake backend. */
    private record FakeGrant(String name, long fencingToken) implements Grant {
    }

    /**
     * One backend, scripted: the application lock's polls wait until the test grants it, its floor raise
     * waits until the test answers it, its renewals answer as the test says; the migrating driver's own
     * floor-sync lock is granted at once and left alone. Concurrency: synchronized.
     */
    private static final class FakeBackend implements TokenFloorDriver {
        private final VirtualClock clock;
        private final long token;
        private boolean granting;
        private boolean renewalsConfirm = true;
        private CompletableFuture<Boolean> floor;
        private final List<Long> renewedAt = new ArrayList<>();
        private final List<Grant> released = new ArrayList<>();

        FakeBackend(VirtualClock clock, long token) {
            this.clock = clock;
            this.token = token;
        }

        synchronized void grant() {
            granting = true;
        }

        synchronized void renewalsSayLost() {
            renewalsConfirm = false;
        }

        synchronized CompletableFuture<Boolean> floor() {
            return floor;
        }

        synchronized List<Long> renewedAt() {
            return List.copyOf(renewedAt);
        }

        synchronized List<Grant> released() {
            return List.copyOf(released);
        }

        @Override
        public LockAttempt attempt(String name, String owner) {
            return new LockAttempt() {
                @Override
                public CompletionStage<Optional<Grant>> poll(Duration ttl) {
                    synchronized (FakeBackend.this) {
                        boolean now = granting || !name.equals(NAME);
                        return CompletableFuture.completedFuture(now ? Optional.of(new FakeGrant(name, token)) : Optional.empty());
                    }
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
        public synchronized CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
            if (!((FakeGrant) grant).name().equals(NAME)) {
                return CompletableFuture.completedFuture(true);
            }
            this.floor = new CompletableFuture<>();
            return this.floor;
        }

        @Override
        public synchronized CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
            renewedAt.add(clock.nanoTime());
            return CompletableFuture.completedFuture(renewalsConfirm);
        }

        @Override
        public synchronized CompletionStage<Boolean> release(Grant grant) {
            released.add(grant);
            return CompletableFuture.completedFuture(true);
        }

        @Override
        public void close() {
        }
    }

    private final VirtualClock clock = new VirtualClock();
    /** The backend left gives the higher token, so the floor is raised on the backend moved to. */
    private final FakeBackend left = new FakeBackend(clock, 900);
    private final FakeBackend target = new FakeBackend(clock, 7);
    private final MigratingDriver driver = MigratingDriver.of(left, "left", target, "target", TTL, () -> clock);

    {
        left.grant();
    }

    @AfterEach
    void close() {
        driver.close();
    }

    /** Takes the first lock at 0 s; the second is granted at {@code secondAt}, and its floor raise waits. */
    private CompletableFuture<Optional<Grant>> handOverPendingOnTheFloor(Duration secondAt) {
        LockAttempt attempt = driver.attempt(NAME, "owner");
        assertThat(attempt.poll(TTL).toCompletableFuture().join()).as("the second lock is still held elsewhere").isEmpty();
        clock.advanceTo(secondAt);
        target.grant();
        CompletableFuture<Optional<Grant>> polled = attempt.poll(TTL).toCompletableFuture();
        assertThat(target.floor()).as("the floor raise was sent to the backend with the lower token").isNotNull();
        assertThat(polled).isNotDone();
        return polled;
    }

    @Test
    @DisplayName("the first grant is renewed while the token floor is raised, and the grant handed over counts"
            + " from that renewal, not the one before the second lock was granted")
    void keptAliveUntilTheFloorIsRaised() {
        CompletableFuture<Optional<Grant>> polled = handOverPendingOnTheFloor(Duration.ofMillis(1500));
        assertThat(left.renewedAt()).as("renewed every TTL/3 while the second lock was awaited")
                .containsExactly(Duration.ofSeconds(1).toNanos());

        clock.advanceTo(Duration.ofMillis(2500));
        assertThat(left.renewedAt()).as("still renewed while the floor is raised")
                .containsExactly(Duration.ofSeconds(1).toNanos(), Duration.ofSeconds(2).toNanos());

        target.floor().complete(true);
        MigratingGrant both = (MigratingGrant) polled.join().orElseThrow();
        assertThat(both.fencingToken()).isEqualTo(900);
        assertThat(both.fromValidFromNanos()).as("valid from the last confirmed renewal")
                .isEqualTo(Duration.ofSeconds(2).toNanos());

        clock.advanceTo(Duration.ofSeconds(6));
        assertThat(left.renewedAt()).as("after the hand-over lock-api renews, not the attempt").hasSize(2);
    }

    @Test
    @DisplayName("a first grant lost while the floor is raised fails the acquisition with UNAVAILABLE, and"
            + " abandoning it releases both grants")
    void lostWhileTheFloorIsRaised() {
        LockAttempt attempt = driver.attempt(NAME, "owner");
        attempt.poll(TTL).toCompletableFuture().join();
        target.grant();
        left.renewalsSayLost();
        CompletableFuture<Optional<Grant>> polled = attempt.poll(TTL).toCompletableFuture();
        clock.advanceTo(Duration.ofMillis(1100));
        target.floor().complete(true);

        assertThatThrownBy(polled::join).cause().isInstanceOfSatisfying(LockException.class, e -> {
            assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            assertThat(e.getMessage()).contains("lost on the left backend");
        });
        attempt.abandon().toCompletableFuture().join();
        // The driver's own floor-sync turns take and release their lock too; this attempt's grants are named NAME.
        assertThat(left.released()).filteredOn(g -> ((FakeGrant) g).name().equals(NAME)).hasSize(1);
        assertThat(target.released()).filteredOn(g -> ((FakeGrant) g).name().equals(NAME)).hasSize(1);
    }
}
