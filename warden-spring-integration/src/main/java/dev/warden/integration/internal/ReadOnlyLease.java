package dev.warden.integration.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * A registry lock's lease as its holder sees it: everything that reads it, and {@code onLost}; what would end it
 * or move its limit throws, since the lock owns the hold ({@code unlock()} ends it, the registry's
 * {@code renewLock(key, ttl)} moves its limit). Stateless beyond the lease.
 */
final class ReadOnlyLease implements Lease {

    private static final String OWNED = "the lock owns this lease: unlock() releases it, and the registry's "
            + "renewLock(key, ttl) moves its maximum hold time";

    private final Lease lease;

    ReadOnlyLease(Lease lease) {
        this.lease = lease;
    }

    @Override
    public String name() {
        return lease.name();
    }

    @Override
    public long fencingToken() {
        return lease.fencingToken();
    }

    @Override
    public boolean isValid() {
        return lease.isValid();
    }

    @Override
    public Duration remaining() {
        return lease.remaining();
    }

    @Override
    public Instant expiresAt() {
        return lease.expiresAt();
    }

    @Override
    public void onLost(Consumer<LeaseLost> listener) {
        lease.onLost(listener);
    }

    @Override
    public boolean setMaxHoldTime(Duration fromNow) {
        throw new UnsupportedOperationException(OWNED);
    }

    @Override
    public boolean releaseAfter(Duration delay) {
        throw new UnsupportedOperationException(OWNED);
    }

    @Override
    public ReleaseOutcome release() {
        throw new UnsupportedOperationException(OWNED);
    }

    @Override
    public CompletionStage<ReleaseOutcome> releaseAsync() {
        throw new UnsupportedOperationException(OWNED);
    }

    @Override
    public void close() {
        throw new UnsupportedOperationException(OWNED);
    }

    @Override
    public String toString() {
        return lease.toString();
    }
}
