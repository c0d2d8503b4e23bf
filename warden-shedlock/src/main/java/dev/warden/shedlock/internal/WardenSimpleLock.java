package dev.warden.shedlock.internal;

import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One ShedLock lock object over a {@link Hold}: usable once, by {@link #unlock()} or {@link #extend}, from any
 * thread; an extension returns a new object over the same hold. Concurrency: {@code active} is atomic; the
 * rest is final.
 */
public final class WardenSimpleLock implements SimpleLock {

    private final Hold hold;
    private final LockConfiguration configuration;
    private final AtomicBoolean active = new AtomicBoolean(true);

    public WardenSimpleLock(Hold hold, LockConfiguration configuration) {
        this.hold = hold;
        this.configuration = configuration;
    }

    /** The hold, while this lock is neither unlocked nor extended. */
    public Optional<Hold> activeHold() {
        return active.get() ? Optional.of(hold) : Optional.empty();
    }

    @Override
    public void unlock() {
        if (!active.compareAndSet(true, false)) {
            throw spent();
        }
        hold.unbind();
        Duration untilLockAtLeast = Duration.between(ClockProvider.now(), configuration.getLockAtLeastUntil());
        // False when the lease is no longer held: the release below reports how it ended.
        if (untilLockAtLeast.compareTo(Duration.ZERO) > 0 && hold.releaseLater(untilLockAtLeast)) {
            return;
        }
        hold.release(true);
    }

    @Override
    public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
        if (!active.get()) {
            throw spent();
        }
        // Refuses lockAtLeastFor above lockAtMostFor, or a negative lockAtMostFor, leaving this lock usable.
        LockConfiguration extended = new LockConfiguration(ClockProvider.now(), configuration.getName(),
                lockAtMostFor, lockAtLeastFor);
        if (!active.compareAndSet(true, false)) {
            throw spent();
        }
        Instant now = ClockProvider.now();
        Duration atMost = Duration.between(now, extended.getLockAtMostUntil());
        boolean extensible = hold.lease().isValid() && configuration.getLockAtMostUntil().isAfter(now)
                && atMost.compareTo(Duration.ZERO) > 0;
        // A limit moved to a moment that has passed by the time the keeper reads it ends the hold there.
        if (!extensible || !hold.moveHoldEnd(atMost) || !hold.lease().isValid()) {
            hold.unbind();
            hold.release(false);
            return Optional.empty();
        }
        return Optional.of(new WardenSimpleLock(hold, extended));
    }

    private IllegalStateException spent() {
        return new IllegalStateException("Lock " + configuration.getName()
                + " is not valid, it has already been unlocked or extended");
    }

    @Override
    public String toString() {
        return "WardenSimpleLock[" + configuration + ", " + hold + (active.get() ? "]" : ", spent]");
    }
}
