package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.tck.internal.Await;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How a lease ends when nobody releases it in time, with no fault needed: its maximum hold time.
 * The holder hears of it once, {@code isValid()} never disagrees with the listener, and code written
 * against {@code Lock} learns of it at {@code unlock()}.
 */
abstract class LeaseEndClauses {

    private static final Duration MAX_HOLD = Duration.ofMillis(300);

    private final LockKit kit;

    LeaseEndClauses(LockKit kit) {
        this.kit = kit;
    }

    @Test
    @DisplayName("at its maximum hold time a lease is lost (MAX_HOLD_TIME) and the lock goes to the next holder well before its TTL")
    void maxHoldTime() {
        String name = kit.newName();
        LockClient other = kit.client();
        // Both clients open before the clock starts: the bound is on the hold, not on connecting.
        LockClient holder = kit.client();
        long t0 = System.nanoTime();
        Lease lease = holder.lock(name).withMaxHoldTime(MAX_HOLD).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        Lease next = other.lock(name).tryAcquire(kit.ttl().multipliedBy(3)).orElseThrow();
        Duration took = Duration.ofNanos(System.nanoTime() - t0);
        assertThat(took).as("freed at the hold limit, not at the TTL").isGreaterThanOrEqualTo(MAX_HOLD)
                .isLessThan(MAX_HOLD.plus(kit.ttl().dividedBy(2)).plus(kit.slack().dividedBy(4)));
        assertThat(lease.isValid()).isFalse();
        assertThat(lost.get()).isNotNull();
        assertThat(lost.get().reason()).isEqualTo(LostReason.MAX_HOLD_TIME);
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.release();
    }

    @Test
    @DisplayName("a held lease's maximum hold time moves: later, it is held past its old limit and ends at the new one; earlier, it ends then")
    void maxHoldTimeMoves() {
        String name = kit.newName();
        LockClient holder = kit.client();
        LockClient other = kit.client();
        Lease lease = holder.lock(name).withMaxHoldTime(MAX_HOLD).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        assertThat(lease.setMaxHoldTime(kit.ttl().multipliedBy(2))).isTrue();
        Await.during(MAX_HOLD.plus(kit.renewInterval()), "held past the old limit", lease::isValid);
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).as("the lock while the moved limit runs").isEmpty();
        assertThat(lease.setMaxHoldTime(Duration.ofMillis(100))).isTrue();
        Lease next = other.lock(name).tryAcquire(kit.ttl().plus(kit.slack())).orElseThrow(
                () -> new AssertionError("the lock was not freed at the limit moved earlier"));
        // Listeners run on the event thread, possibly after the server freed the lock; isValid() waits for them.
        assertThat(lease.isValid()).isFalse();
        assertThat(lost.get()).isNotNull();
        assertThat(lost.get().reason()).isEqualTo(LostReason.MAX_HOLD_TIME);
        assertThat(lease.setMaxHoldTime(kit.ttl())).as("a lost lease's limit does not move").isFalse();
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        next.release();
        assertThat(next.setMaxHoldTime(kit.ttl())).as("a released lease's limit does not move").isFalse();
        assertThatThrownBy(() -> next.setMaxHoldTime(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("releaseAfter keeps a lease held and renewed past its TTL, then releases it as an orderly end, telling no loss")
    void releaseAfter() {
        String name = kit.newName();
        LockClient other = kit.client();
        Lease lease = kit.client().lock(name).acquire();
        AtomicReference<LeaseLost> lost = LockKit.watch(lease);
        // Held past a TTL (checked until a TTL and a renewal interval), then the release a slack later, so the
        // check that another client cannot take the lock lands before it even when it runs late.
        Duration heldFor = kit.ttl().plus(kit.renewInterval());
        Duration delay = heldFor.plus(kit.slack());
        long t0 = System.nanoTime();
        assertThat(lease.releaseAfter(delay)).isTrue();
        Await.during(heldFor, "held and valid past a TTL after releaseAfter", lease::isValid);
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).as("the lock before the delay ran out").isEmpty();
        Lease next = other.lock(name).tryAcquire(delay.plus(kit.slack())).orElseThrow(
                () -> new AssertionError("the lock was not released after the delay"));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(delay);
        assertThat(lease.isValid()).isFalse();
        assertThat(lost.get()).as("an orderly release tells no loss").isNull();
        assertThat(lease.releaseAfter(Duration.ZERO)).as("a released hold").isFalse();
        assertThat(next.releaseAfter(Duration.ZERO)).isTrue();
        Await.until(kit.slack(), "released at once with a zero delay", () -> !next.isValid());
    }

    @Test
    @DisplayName("when isValid() says false, every onLost listener has already run, once")
    void isValidIsTheMomentOfTruth() throws Exception {
        Lease lease = kit.client("max-hold-time", MAX_HOLD).lock(kit.newName()).acquire();
        AtomicInteger told = new AtomicInteger();
        lease.onLost(l -> told.incrementAndGet());
        lease.onLost(l -> told.incrementAndGet());
        long end = System.nanoTime() + MAX_HOLD.plus(kit.slack()).toNanos();
        while (lease.isValid()) {
            assertThat(System.nanoTime() - end).as("the lease ends at its maximum hold time").isNegative();
            Thread.onSpinWait();
        }
        assertThat(told).as("both listeners ran before isValid() said false").hasValue(2);
        CompletableFuture<LeaseLost> late = new CompletableFuture<>();
        lease.onLost(late::complete);
        assertThat(late.get(5, TimeUnit.SECONDS).reason()).as("a listener added after the loss is told at once")
                .isEqualTo(LostReason.MAX_HOLD_TIME);
        Await.during(kit.renewInterval(), "nobody is told twice", () -> told.get() == 2);
    }

    @Test
    @DisplayName("unlock() through the Lock view after a loss throws LockException LOST, and the hold is gone")
    void unlockAfterLossThrows() {
        String name = kit.newName();
        Lock lock = kit.client().lock(name).withMaxHoldTime(MAX_HOLD).asLock();
        lock.lock();
        Await.until(kit.slack(), "another client gets the lock after the hold limit",
                () -> kit.client().lock(name).tryAcquire(Duration.ZERO).map(l -> {
                    l.release();
                    return true;
                }).orElse(false));
        assertThatThrownBy(lock::unlock).isInstanceOfSatisfying(LockException.class,
                e -> assertThat(e.reason()).isEqualTo(LockException.Reason.LOST));
        assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    }
}
