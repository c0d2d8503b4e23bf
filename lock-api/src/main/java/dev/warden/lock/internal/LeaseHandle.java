package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.internal.config.Durations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One acquisition's view of a held lock; releasing it twice releases once. Dropping it unreleased
 * while the lock is held is reported by the {@link LeakDetector}. Concurrency: {@code released} is
 * atomic; the rest is final.
 */
final class LeaseHandle implements Lease {

    private static final Logger log = LoggerFactory.getLogger(LeaseHandle.class);

    private final HeldLock held;
    private final AtomicBoolean released = new AtomicBoolean();
    private final LeakDetector.Tracked tracked;

    LeaseHandle(HeldLock held, LeakDetector.AcquiredAt at) {
        this.held = held;
        this.tracked = held.parts().leaks().track(this, held, at);
    }

    @Override
    public String name() {
        return held.name();
    }

    @Override
    public long fencingToken() {
        return held.token();
    }

    @Override
    public boolean isValid() {
        return !released.get() && held.isValid();
    }

    @Override
    public Duration remaining() {
        return released.get() ? Duration.ZERO : held.remaining();
    }

    @Override
    public Instant expiresAt() {
        return held.parts().time().now().plus(remaining());
    }

    @Override
    public void onLost(Consumer<LeaseLost> listener) {
        held.onLost(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public boolean setMaxHoldTime(Duration fromNow) {
        requireNonNegative(fromNow, "fromNow");
        return !released.get() && held.moveHoldEnd(Durations.toNanosSaturated(fromNow));
    }

    @Override
    public boolean releaseAfter(Duration delay) {
        requireNonNegative(delay, "delay");
        if (released.get() || !held.isHeld()) {
            return false;
        }
        // The keeper's clock fires the release; until then the hold is renewed like any other.
        held.parts().time().schedule(() -> releaseAsync().whenComplete((outcome, error) -> {
            if (error != null) {
                log.warn("the delayed release of lock '{}' (token {}) was not confirmed; it expires within its TTL",
                        held.name(), held.token(), error);
            }
        }), Durations.toNanosSaturated(delay));
        return true;
    }

    private static void requireNonNegative(Duration d, String what) {
        if (d == null || d.isNegative()) {
            throw new IllegalArgumentException(what + " must be zero or positive, was " + d);
        }
    }

    @Override
    public ReleaseOutcome release() {
        if (!released.compareAndSet(false, true)) {
            return ReleaseOutcome.ALREADY_RELEASED;
        }
        tracked.done();
        return Release.one(held);
    }

    @Override
    public CompletionStage<ReleaseOutcome> releaseAsync() {
        if (!released.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(ReleaseOutcome.ALREADY_RELEASED);
        }
        tracked.done();
        return held.release(HeldLock.Holds.ONE, HeldLock.Releaser.HOLDER)
                .whenCompleteAsync((o, e) -> { }, held.parts().callbacks());
    }

    @Override
    public void close() {
        if (release() == ReleaseOutcome.LOST) {
            log.warn("lock '{}' (token {}) had been lost before it was released", held.name(), held.token());
        }
    }

    /** How the lease was lost, once it was. */
    java.util.Optional<LeaseLost> lost() {
        return held.lost();
    }

    @Override
    public String toString() {
        // No clock read here: a toString must not mark a lease lost.
        return "Lease[" + held.name() + ", token " + held.token() + (!released.get() && held.isHeld() ? ", held]" : ", not held]");
    }
}
