package dev.warden.shedlock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * A ShedLock lock's lease as its task sees it: everything that reads it, and {@code onLost}; what would end it
 * or move its limit throws, since ShedLock owns it (unlock ends it, {@code LockExtender} moves it), and a task
 * that released it itself would cut its {@code lockAtLeastFor} short. Stateless beyond the lease.
 */
final class ReadOnlyLease implements Lease {

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
        throw refused("its limit is moved by LockExtender.extendActiveLock (or SimpleLock.extend)");
    }

    @Override
    public boolean releaseAfter(Duration delay) {
        throw refused("it is released when the task ends (SimpleLock.unlock), after its lockAtLeastFor");
    }

    @Override
    public ReleaseOutcome release() {
        throw refused("it is released when the task ends (SimpleLock.unlock), after its lockAtLeastFor");
    }

    @Override
    public CompletionStage<ReleaseOutcome> releaseAsync() {
        throw refused("it is released when the task ends (SimpleLock.unlock), after its lockAtLeastFor");
    }

    @Override
    public void close() {
        throw refused("it is released when the task ends (SimpleLock.unlock), after its lockAtLeastFor");
    }

    private UnsupportedOperationException refused(String how) {
        return new UnsupportedOperationException("the lease of ShedLock lock '" + lease.name()
                + "' belongs to ShedLock: " + how);
    }

    @Override
    public String toString() {
        return "ShedLock" + lease;
    }
}
