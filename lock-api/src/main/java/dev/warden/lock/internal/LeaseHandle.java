package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/** One acquisition's view of a held lock; releasing it twice releases once. */
final class LeaseHandle implements Lease {

    private static final Logger log = LoggerFactory.getLogger(LeaseHandle.class);

    private final HeldLock held;
    private final AtomicBoolean released = new AtomicBoolean();

    LeaseHandle(HeldLock held) {
        this.held = held;
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
        return Instant.now().plus(remaining());
    }

    @Override
    public void onLost(Consumer<LeaseLost> listener) {
        held.onLost(Objects.requireNonNull(listener, "listener"));
    }

    @Override
    public ReleaseOutcome release() {
        if (!released.compareAndSet(false, true)) {
            return ReleaseOutcome.ALREADY_RELEASED;
        }
        return held.releaseOne();
    }

    @Override
    public CompletionStage<ReleaseOutcome> releaseAsync() {
        if (!released.compareAndSet(false, true)) {
            return CompletableFuture.completedFuture(ReleaseOutcome.ALREADY_RELEASED);
        }
        return held.releaseAsync(false, false).whenCompleteAsync((o, e) -> { }, held.callbacks());
    }

    @Override
    public void close() {
        if (release() == ReleaseOutcome.LOST) {
            log.warn("lock '{}' (token {}) had been lost before it was released", held.name(), held.token());
        }
    }

    @Override
    public String toString() {
        return "Lease[" + held.name() + ", token " + held.token() + (isValid() ? ", valid]" : ", invalid]");
    }
}
