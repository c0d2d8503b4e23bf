package dev.warden.reactor.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;
import reactor.test.StepVerifier;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LeaseMono}'s states, one interleaving at a time, on a future the test completes: a lease is delivered
 * or released, never both, never neither. (The races themselves: MemoryReactiveLockTest.)
 */
class LeaseMonoTest {

    static final Duration DEADLINE = Duration.ofSeconds(5);

    /** A lease that counts its releases. */
    static final class CountedLease implements Lease {
        final AtomicInteger releases = new AtomicInteger();

        @Override public String name() { return "x"; }
        @Override public long fencingToken() { return 7; }
        @Override public boolean isValid() { return releases.get() == 0; }
        @Override public Duration remaining() { return Duration.ZERO; }
        @Override public Instant expiresAt() { return Instant.EPOCH; }
        @Override public void onLost(Consumer<LeaseLost> listener) { }
        @Override public boolean setMaxHoldTime(Duration fromNow) { return false; }
        @Override public boolean releaseAfter(Duration delay) { return false; }
        @Override public ReleaseOutcome release() { releases.incrementAndGet(); return ReleaseOutcome.RELEASED; }
        @Override public CompletionStage<ReleaseOutcome> releaseAsync() { return CompletableFuture.completedFuture(release()); }
        @Override public void close() { release(); }
    }

    /** Requests only when told, records what it is given, even after it cancelled. */
    static final class Manual extends BaseSubscriber<Lease> {
        final List<Object> signals = new ArrayList<>();

        @Override protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) { }
        @Override protected void hookOnNext(Lease value) { signals.add(value); }
        @Override protected void hookOnComplete() { signals.add("complete"); }
        @Override protected void hookOnError(Throwable t) { signals.add(t); }
    }

    @Test
    @DisplayName("granted while requested: delivered, not released")
    void delivered() {
        CompletableFuture<Lease> future = new CompletableFuture<>();
        CountedLease lease = new CountedLease();
        StepVerifier.create(new LeaseMono(() -> future))
                .then(() -> future.complete(lease))
                .expectNext(lease)
                .expectComplete()
                .verify(DEADLINE);
        assertThat(lease.releases).hasValue(0);
    }

    @Test
    @DisplayName("granted before the request: kept until requested, then delivered")
    void arrivedThenRequested() {
        CompletableFuture<Lease> future = new CompletableFuture<>();
        CountedLease lease = new CountedLease();
        Manual subscriber = new Manual();
        new LeaseMono(() -> future).subscribe(subscriber);
        future.complete(lease);
        assertThat(subscriber.signals).isEmpty();
        subscriber.request(1);
        assertThat(subscriber.signals).containsExactly(lease, "complete");
        assertThat(lease.releases).hasValue(0);
    }

    @Test
    @DisplayName("granted before the request, then cancelled: released, never delivered")
    void arrivedThenCancelled() {
        CompletableFuture<Lease> future = new CompletableFuture<>();
        CountedLease lease = new CountedLease();
        Manual subscriber = new Manual();
        new LeaseMono(() -> future).subscribe(subscriber);
        future.complete(lease);
        subscriber.cancel();
        subscriber.request(1);
        assertThat(subscriber.signals).isEmpty();
        assertThat(lease.releases).hasValue(1);
    }

    @Test
    @DisplayName("cancelled while waiting: the acquisition's future is cancelled, nothing delivered")
    void cancelledWhileWaiting() {
        CompletableFuture<Lease> future = new CompletableFuture<>();
        Manual subscriber = new Manual();
        new LeaseMono(() -> future).subscribe(subscriber);
        subscriber.request(1);
        subscriber.cancel();
        assertThat(future).isCancelled();
        assertThat(subscriber.signals).isEmpty();
    }

    @Test
    @DisplayName("granted after the cancellation (the future could no longer be cancelled): released")
    void grantedAfterCancel() {
        CountedLease lease = new CountedLease();
        CompletableFuture<Lease> future = new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
                complete(lease);                                     // the grant won the race
                return false;
            }
        };
        Manual subscriber = new Manual();
        new LeaseMono(() -> future).subscribe(subscriber);
        subscriber.request(1);
        subscriber.cancel();
        assertThat(subscriber.signals).isEmpty();
        assertThat(lease.releases).hasValue(1);
    }

    @Test
    @DisplayName("a failed acquisition is an error signal, unwrapped from CompletionException")
    void failure() {
        LockException unavailable = new LockException(LockException.Reason.UNAVAILABLE, "down");
        StepVerifier.create(new LeaseMono(() -> CompletableFuture.failedFuture(new CompletionException(unavailable))))
                .expectErrorSatisfies(e -> assertThat(e).isSameAs(unavailable))
                .verify(DEADLINE);
        StepVerifier.create(new LeaseMono(() -> {
                    throw new IllegalStateException("closed");
                }))
                .expectErrorMessage("closed")
                .verify(DEADLINE);
    }

    @Test
    @DisplayName("one acquisition per subscription")
    void onePerSubscription() {
        AtomicInteger started = new AtomicInteger();
        LeaseMono mono = new LeaseMono(() -> {
            started.incrementAndGet();
            return CompletableFuture.completedFuture(new CountedLease());
        });
        assertThat(started).hasValue(0);
        mono.block(DEADLINE);
        mono.block(DEADLINE);
        assertThat(started).hasValue(2);
    }
}
