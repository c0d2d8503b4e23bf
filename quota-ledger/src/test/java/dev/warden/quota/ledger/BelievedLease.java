package dev.warden.quota.ledger;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.ReleaseOutcome;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** A lease of the account's lock whose holder believes it valid: only the script's fence can stop it. */
record BelievedLease(String name, long fencingToken) implements Lease {
    public boolean isValid() {
        return true;
    }

    public Duration remaining() {
        return Duration.ofSeconds(30);
    }

    public Instant expiresAt() {
        return Instant.now().plusSeconds(30);
    }

    public void onLost(Consumer<LeaseLost> listener) {
    }

    public boolean setMaxHoldTime(Duration fromNow) {
        throw new UnsupportedOperationException("the checker never moves a believed lease's limit");
    }

    public boolean releaseAfter(Duration delay) {
        throw new UnsupportedOperationException("the checker never releases a believed lease");
    }

    public ReleaseOutcome release() {
        throw new UnsupportedOperationException("the checker never releases a believed lease");
    }

    public java.util.concurrent.CompletionStage<ReleaseOutcome> releaseAsync() {
        return CompletableFuture.failedFuture(new UnsupportedOperationException());
    }

    public void close() {
    }
}
