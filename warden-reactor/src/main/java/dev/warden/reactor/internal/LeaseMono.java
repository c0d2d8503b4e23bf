package dev.warden.reactor.internal;

import dev.warden.lock.Lease;
import org.reactivestreams.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * A lease from lock-api's asynchronous acquisition, one acquisition per subscription, such that a lease is
 * either delivered to the subscriber (then it is the subscriber's) or released here: never both, never neither.
 *
 * <p>Why not {@code Mono.fromFuture}: a value that completes the future while the subscriber cancels, or
 * before it has requested and cancels afterwards, is left to Reactor's discard and drop hooks there, and
 * a lease that reached neither would stay held (renewed until its client closes). Here one state word
 * decides: the lease is emitted only by the transition to {@code EMITTED}, and whoever moves the state to
 * {@code CANCELLED} after the lease arrived, or finds it {@code CANCELLED} when the lease arrives, releases it.
 * Cancelling before the acquisition ends cancels lock-api's future, which abandons the attempt and releases
 * a grant that raced in ({@code DistributedLock.acquireAsync}).
 */
public final class LeaseMono extends Mono<Lease> {

    private static final Logger log = LoggerFactory.getLogger(LeaseMono.class);

    private final Supplier<CompletableFuture<Lease>> start;

    /** @param start begins one acquisition; called once per subscription, on the subscribing thread */
    public LeaseMono(Supplier<CompletableFuture<Lease>> start) {
        this.start = Objects.requireNonNull(start, "start");
    }

    @Override
    public void subscribe(CoreSubscriber<? super Lease> actual) {
        CompletableFuture<Lease> future;
        try {
            future = Objects.requireNonNull(start.get(), "the acquisition returned no future");
        } catch (Throwable t) {
            Operators.error(actual, t);
            return;
        }
        Pending pending = new Pending(actual, future);
        actual.onSubscribe(pending);
        future.whenComplete(pending);
    }

    /** Releases a lease nobody will receive, telling only the log when that fails. */
    static void releaseUnclaimed(Lease lease) {
        lease.releaseAsync().whenComplete((outcome, error) -> {
            if (error != null) {
                log.warn("lock '{}' (token {}) was granted to a cancelled subscriber and its release was not confirmed;"
                        + " it expires within its TTL", lease.name(), lease.fencingToken(), unwrap(error));
            }
        });
    }

    static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }

    /** One subscription: the subscriber's demand, the acquisition's result, and who ends it. */
    private static final class Pending implements Subscription, BiConsumer<Lease, Throwable> {

        /** Neither demand nor result yet. */
        private static final int WAITING = 0;
        /** Demand, no result yet. */
        private static final int REQUESTED = 1;
        /** A result, no demand yet. */
        private static final int ARRIVED = 2;
        /** The result went to the subscriber. */
        private static final int EMITTED = 3;
        /** The subscriber cancelled before it was given anything. */
        private static final int CANCELLED = 4;

        private final AtomicInteger state = new AtomicInteger(WAITING);
        private final CoreSubscriber<? super Lease> actual;
        private final CompletableFuture<Lease> future;
        /** Written before the state moves to ARRIVED or EMITTED, read after it was seen there. */
        private Lease lease;
        private Throwable error;

        Pending(CoreSubscriber<? super Lease> actual, CompletableFuture<Lease> future) {
            this.actual = actual;
            this.future = future;
        }

        @Override
        public void request(long n) {
            if (!Operators.validate(n)) {
                return;
            }
            for (;;) {
                int s = state.get();
                if (s == WAITING) {
                    if (state.compareAndSet(WAITING, REQUESTED)) {
                        return;
                    }
                } else if (s == ARRIVED) {
                    if (state.compareAndSet(ARRIVED, EMITTED)) {
                        emit();
                    }
                    return;                                   // else a cancellation took it, and released it
                } else {
                    return;
                }
            }
        }

        @Override
        public void accept(Lease granted, Throwable failed) {
            this.lease = granted;
            this.error = failed;
            for (;;) {
                int s = state.get();
                if (s == WAITING) {
                    if (state.compareAndSet(WAITING, ARRIVED)) {
                        return;
                    }
                } else if (s == REQUESTED) {
                    if (state.compareAndSet(REQUESTED, EMITTED)) {
                        emit();
                        return;
                    }
                    // Lost to a cancellation: the next turn of the loop releases the lease.
                } else {
                    // CANCELLED: nobody will take it. (A failure then is the cancellation's own, or one that
                    // left nothing held: lock-api cleans up a failed acquisition before it completes.)
                    if (granted != null) {
                        releaseUnclaimed(granted);
                    }
                    return;
                }
            }
        }

        @Override
        public void cancel() {
            for (;;) {
                int s = state.get();
                if (s == EMITTED || s == CANCELLED) {
                    return;
                }
                if (state.compareAndSet(s, CANCELLED)) {
                    if (s == ARRIVED) {
                        if (lease != null) {
                            releaseUnclaimed(lease);
                        }
                    } else {
                        // Still waiting: lock-api abandons the attempt and releases a grant that raced in. If the
                        // future completed meanwhile, accept() finds CANCELLED and releases the lease itself.
                        future.cancel(false);
                    }
                    return;
                }
            }
        }

        private void emit() {
            if (error != null) {
                actual.onError(unwrap(error));
            } else {
                actual.onNext(lease);
                actual.onComplete();
            }
        }
    }
}
