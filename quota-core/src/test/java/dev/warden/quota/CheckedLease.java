package dev.warden.quota;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * A lease as its holder saw it when it last checked: valid. It stands for a holder that checked
 * its lease, then froze (GC, stalled host) before its request reached Redis, so only the
 * script's fence can stop it.
 */
final class CheckedLease implements Lease {

    private final Lease lease;

    CheckedLease(Lease lease) {
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
        return true;
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
        return lease.setMaxHoldTime(fromNow);
    }

    @Override
    public boolean releaseAfter(Duration delay) {
        return lease.releaseAfter(delay);
    }

    @Override
    public ReleaseOutcome release() {
        return lease.release();
    }

    @Override
    public java.util.concurrent.CompletionStage<ReleaseOutcome> releaseAsync() {
        return lease.releaseAsync();
    }

    @Override
    public void close() {
        lease.close();
    }
}
