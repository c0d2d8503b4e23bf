package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static dev.warden.lock.internal.VirtualClient.DRIFT;
import static dev.warden.lock.internal.VirtualClient.TTL;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lease keeper's timing rules on a virtual clock: TTL 3 s, so a renewal every second and a
 * deadline 2968 ms after the send time the server last confirmed. Each test takes milliseconds.
 */
class LeaseTimingTest {

    private static final Duration RENEW_EVERY = TTL.dividedBy(3);
    private static final Duration NANO = Duration.ofNanos(1);

    private VirtualClient v = new VirtualClient();

    @AfterEach
    void close() {
        v.close();
    }

    private static List<LeaseLost> watch(Lease lease) {
        List<LeaseLost> told = new CopyOnWriteArrayList<>();
        lease.onLost(told::add);
        return told;
    }

    @Test
    @DisplayName("a renewal answered after the deadline does not revive the lease")
    void lateRenewalDoesNotRevive() {
        v.driver.holdRenewals();
        Lease lease = v.client.lock("a").acquire();
        List<LeaseLost> told = watch(lease);
        v.clock.advance(RENEW_EVERY);
        assertThat(v.driver.renewTimes()).containsExactly(RENEW_EVERY);
        v.clock.advanceTo(TTL.minus(DRIFT));
        assertThat(told).singleElement().extracting(LeaseLost::reason).isEqualTo(LostReason.EXPIRED);

        v.driver.answerRenewal(0, true);
        assertThat(lease.isValid()).isFalse();
        assertThat(lease.remaining()).isZero();
        v.clock.advance(TTL.multipliedBy(5));
        assertThat(v.driver.renewTimes()).as("no renewal after the loss").hasSize(1);
        assertThat(told).hasSize(1);
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.LOST);
    }

    @Test
    @DisplayName("the deadline counts from the send time, less the drift margin")
    void deadlineCountsFromTheSendTime() {
        CompletableFuture<Optional<dev.warden.lock.spi.Grant>> answer = new CompletableFuture<>();
        v.driver.thenPoll(() -> answer).holdRenewals();
        CompletableFuture<Lease> acquiring = v.client.lock("a").acquireAsync();
        v.clock.advance(Duration.ofMillis(400));
        answer.complete(Optional.of(v.driver.nextGrant()));
        Lease lease = acquiring.join();
        assertThat(lease.remaining()).isEqualTo(TTL.minus(DRIFT).minusMillis(400));

        v.clock.advance(RENEW_EVERY);
        Duration sent = v.clock.elapsed();
        assertThat(v.driver.renewTimes()).containsExactly(sent);
        v.clock.advance(Duration.ofMillis(300));
        v.driver.answerRenewal(0, true);
        assertThat(lease.remaining()).isEqualTo(sent.plus(TTL).minus(DRIFT).minus(v.clock.elapsed()));
        lease.release();
    }

    @Test
    @DisplayName("a lease with a renewal outstanding is lost at its deadline, and onLost fires once")
    void outstandingRenewalLostAtDeadline() {
        v.driver.holdRenewals();
        Lease lease = v.client.lock("a").acquire();
        List<LeaseLost> told = watch(lease);
        v.clock.advance(RENEW_EVERY);
        v.clock.advanceTo(TTL.minus(DRIFT).minus(NANO));
        assertThat(lease.isValid()).isTrue();
        assertThat(told).isEmpty();
        v.clock.advance(NANO);
        assertThat(told).singleElement().satisfies(l -> {
            assertThat(l.reason()).isEqualTo(LostReason.EXPIRED);
            assertThat(l.lastValidAt()).isEqualTo(v.clock.now());
        });
        assertThat(lease.isValid()).isFalse();
        v.driver.failRenewal(0, new IllegalStateException("answered after the deadline"));
        v.clock.advance(TTL);
        assertThat(told).hasSize(1);
        assertThat(v.losses).hasSize(1);
    }

    @Test
    @DisplayName("the maximum hold time ends a lease, frees the lock on the server and stops renewing")
    void maxHoldTimeEndsALease() {
        Duration maxHold = Duration.ofMillis(2500);
        Lease lease = v.client.lock("a").withMaxHoldTime(maxHold).acquire();
        List<LeaseLost> told = watch(lease);
        v.clock.advanceTo(maxHold.minus(NANO));
        assertThat(lease.isValid()).isTrue();
        assertThat(lease.remaining()).isEqualTo(NANO);
        v.clock.advance(NANO);
        assertThat(told).singleElement().extracting(LeaseLost::reason).isEqualTo(LostReason.MAX_HOLD_TIME);
        assertThat(v.driver.released()).as("released on the server for the next holder").hasSize(1);
        v.clock.advance(TTL.multipliedBy(3));
        assertThat(v.driver.renewTimes()).containsExactly(RENEW_EVERY, RENEW_EVERY.multipliedBy(2));
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.LOST);
        assertThat(v.driver.released()).hasSize(1);
    }

    @Test
    @DisplayName("the client's default maximum hold time applies to every lock")
    void defaultMaxHoldTime() {
        v.close();
        v = new VirtualClient(Duration.ofSeconds(30), Optional.of(Duration.ofMillis(700)));
        Lease lease = v.client.lock("a").acquire();
        v.clock.advance(Duration.ofMillis(700));
        assertThat(lease.isValid()).isFalse();
        assertThat(v.losses).singleElement().extracting(LeaseLost::reason).isEqualTo(LostReason.MAX_HOLD_TIME);
    }

    @Test
    @DisplayName("no renewal is sent after release returns, even with one in flight or one due")
    void noRenewalAfterRelease() {
        v.driver.holdRenewals();
        Lease inFlight = v.client.lock("a").acquire();
        v.clock.advance(RENEW_EVERY);
        CompletableFuture<ReleaseOutcome> releasing = inFlight.releaseAsync().toCompletableFuture();
        assertThat(releasing).as("release waits for the renewal in flight").isNotDone();
        v.driver.answerRenewal(0, true);
        assertThat(releasing).isCompletedWithValue(ReleaseOutcome.RELEASED);

        Lease due = v.client.lock("b").acquire();
        v.clock.advance(RENEW_EVERY.minus(NANO));
        assertThat(due.release()).isEqualTo(ReleaseOutcome.RELEASED);
        v.clock.advance(TTL.multipliedBy(5));
        assertThat(v.driver.renewTimes()).containsExactly(RENEW_EVERY);
        assertThat(v.clock.armed()).as("no timer left behind").isEmpty();
        assertThat(v.losses).isEmpty();
    }

    @Test
    @DisplayName("a process pause longer than the TTL is a loss before any work continues")
    void pauseIsALossBeforeWorkContinues() {
        Lease lease = v.client.lock("a").acquire();
        AtomicBoolean listenerSaysLost = new AtomicBoolean();
        lease.onLost(l -> listenerSaysLost.set(true));
        v.clock.jump(TTL.plusSeconds(1));
        assertThat(lease.isValid()).isFalse();
        assertThat(listenerSaysLost).as("the listener ran before isValid() said false").isTrue();
        assertThat(v.losses).singleElement().extracting(LeaseLost::reason).isEqualTo(LostReason.EXPIRED);
        v.clock.advance(Duration.ZERO);
        v.clock.advance(TTL);
        assertThat(v.losses).as("the keeper's timers, run late, tell nobody again").hasSize(1);
        assertThat(v.driver.renewTimes()).isEmpty();
    }

    @Test
    @DisplayName("a lease renewed on time stays valid for as long as it is held")
    void renewedLeaseStaysValid() {
        Lease lease = v.client.lock("a").acquire();
        for (int i = 0; i < 30; i++) {
            v.clock.advance(Duration.ofMillis(499));
            assertThat(lease.isValid()).isTrue();
        }
        assertThat(v.driver.renewTimes()).hasSize(14);
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }
}
