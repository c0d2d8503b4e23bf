package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The acquire loop through failed calls, on a virtual clock: backoff, never a spin, and when it gives up. */
class OutageRetryTest {

    private VirtualClient v = new VirtualClient(Duration.ofSeconds(5), Optional.empty());

    @AfterEach
    void close() {
        v.close();
    }

    private static List<Duration> gaps(List<Duration> times) {
        List<Duration> gaps = new ArrayList<>();
        for (int i = 1; i < times.size(); i++) {
            gaps.add(times.get(i).minus(times.get(i - 1)));
        }
        return gaps;
    }

    private static LockException.Reason reason(CompletableFuture<?> f) {
        assertThat(f).isCompletedExceptionally();
        try {
            f.join();
        } catch (CompletionException e) {
            return ((LockException) e.getCause()).reason();
        }
        throw new AssertionError("not failed");
    }

    @Test
    @DisplayName("a waiter rides out failed calls with a doubling backoff and gets the lock")
    void ridesOutAnOutage() {
        v.driver.failPolls(6, LockException.Reason.UNAVAILABLE);
        CompletableFuture<Lease> waiting = v.client.lock("a").acquireAsync();
        v.clock.advance(Duration.ofSeconds(3));
        assertThat(waiting).isCompleted();
        List<Duration> gaps = gaps(v.driver.pollTimes());
        assertThat(gaps).hasSize(6);
        long full = 50;
        for (Duration gap : gaps) {
            assertThat(gap.toMillis()).as("each pause is half to all of the doubling backoff").isBetween(full / 2, full);
            full = Math.min(full * 2, 1000);
        }
        assertThat(v.driver.abandoned()).as("every failed attempt is abandoned").isEqualTo(6);
        waiting.join().release();
    }

    @Test
    @DisplayName("a blocking waiter fails UNAVAILABLE once the outage outlasts the tolerance, after a handful of tries")
    void failsPastTheTolerance() {
        v.driver.failPolls(1_000, LockException.Reason.UNAVAILABLE);
        CompletableFuture<Lease> waiting = v.client.lock("a").acquireAsync();
        v.clock.advance(Duration.ofMillis(4_999));
        assertThat(waiting).isNotDone();
        v.clock.advance(Duration.ofMillis(1));
        assertThat(reason(waiting)).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(v.driver.pollTimes()).as("tries in 5 s: no spin").hasSizeBetween(8, 14);
        assertThat(v.driver.pollTimes().get(v.driver.pollTimes().size() - 1)).isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    @DisplayName("the last try lands at the tolerance's end, even when that is under a millisecond away")
    void lastTryAtTheEndEvenWhenItIsNear() {
        Outage outage = new Outage(Duration.ofSeconds(5));
        LockException down = new LockException(LockException.Reason.UNAVAILABLE, "down");
        assertThat(outage.failed(0, down)).isTrue();
        long now = Duration.ofSeconds(5).toNanos() - 400_000; // 0.4 ms before the end
        assertThat(outage.failed(now, down)).isTrue();
        assertThat(outage.backoffNanos(now)).isEqualTo(400_000);
        assertThat(outage.failed(now + 400_000, down)).as("the try at the end is the last").isFalse();
    }

    @Test
    @DisplayName("a timed waiter in an outage fails UNAVAILABLE at its deadline, not TIMEOUT")
    void timedWaitEndsUnavailable() {
        v.driver.failPolls(1_000, LockException.Reason.UNAVAILABLE);
        CompletableFuture<Lease> waiting = v.client.lock("a").acquireAsync(Duration.ofMillis(700));
        v.clock.advance(Duration.ofMillis(699));
        assertThat(waiting).isNotDone();
        v.clock.advance(Duration.ofMillis(1));
        assertThat(reason(waiting)).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(v.clock.armed()).isEmpty();
    }

    @Test
    @DisplayName("a failure that is not an outage ends the acquisition at once")
    void protocolErrorsAreNotRetried() {
        v.driver.failPolls(1, LockException.Reason.PROTOCOL);
        CompletableFuture<Lease> waiting = v.client.lock("a").acquireAsync();
        assertThat(reason(waiting)).isEqualTo(LockException.Reason.PROTOCOL);
        assertThat(v.driver.pollTimes()).hasSize(1);
    }

    @Test
    @DisplayName("an outage tolerance of zero fails at the first failed call; tryAcquire(0) tries once")
    void zeroToleranceFailsAtOnce() {
        v.close();
        v = new VirtualClient(Duration.ZERO, Optional.empty());
        v.driver.failPolls(2, LockException.Reason.UNAVAILABLE);
        assertThat(reason(v.client.lock("a").acquireAsync())).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThatThrownBy(() -> v.client.lock("b").tryAcquire(Duration.ZERO)).isInstanceOf(LockException.class);
        assertThat(v.driver.pollTimes()).hasSize(2);
    }

    @Test
    @DisplayName("cancelling a waiter during its backoff leaves no timer and frees the local turn")
    void cancelDuringBackoff() {
        v.driver.failPolls(1, LockException.Reason.UNAVAILABLE);
        CompletableFuture<Lease> waiting = v.client.lock("a").acquireAsync();
        assertThat(v.clock.armed()).hasSize(1);
        waiting.cancel(true);
        assertThat(v.clock.armed()).isEmpty();
        assertThat(v.client.lock("a").tryAcquire(Duration.ZERO)).as("the next contender gets the turn").isPresent();
    }
}
