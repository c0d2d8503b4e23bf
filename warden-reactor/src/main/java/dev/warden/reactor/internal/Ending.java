package dev.warden.reactor.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;
import dev.warden.lock.ReleaseOutcome;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * How one run of a critical section ends its lease ({@code Flux.usingWhen}'s three cleanups), and what the
 * run then reports. One per subscription.
 *
 * <ul>
 *   <li><b>completed</b>: released; a lease that had been lost meanwhile ({@link ReleaseOutcome#LOST}) or a
 *       release the server did not confirm makes the run end with that {@link LockException} after the body's
 *       values ({@link #verdict()}), not with {@code usingWhen}'s own wrapper around a failed cleanup;</li>
 *   <li><b>failed</b>: released; the body's error is what the run ends with, a lost lease or a failed release
 *       added to it as suppressed (as try-with-resources does);</li>
 *   <li><b>cancelled</b>: released; nobody is listening, so a lost lease or a failed release is logged.</li>
 * </ul>
 */
public final class Ending {

    private static final Logger log = LoggerFactory.getLogger(Ending.class);

    private volatile Throwable failure;

    /** The cleanup after the body completed. Never fails: a problem is kept for {@link #verdict()}. */
    public Mono<Void> completed(Lease lease) {
        return release(lease)
                .doOnNext(outcome -> {
                    if (outcome == ReleaseOutcome.LOST) {
                        failure = lost(lease);
                    }
                })
                .onErrorResume(e -> {
                    failure = e;
                    return Mono.empty();
                })
                .then();
    }

    /** The cleanup after the body failed with {@code error}. Never fails: a problem is added to {@code error}. */
    public Mono<Void> failed(Lease lease, Throwable error) {
        return release(lease)
                .doOnNext(outcome -> {
                    if (outcome == ReleaseOutcome.LOST) {
                        error.addSuppressed(lost(lease));
                    }
                })
                .onErrorResume(e -> {
                    error.addSuppressed(e);
                    return Mono.empty();
                })
                .then();
    }

    /** The cleanup after the subscriber cancelled. Never fails: a problem is logged. */
    public Mono<Void> cancelled(Lease lease) {
        return release(lease)
                .doOnNext(outcome -> {
                    if (outcome == ReleaseOutcome.LOST) {
                        log.warn("lock '{}' (token {}) had been lost before the cancelled critical section released it",
                                lease.name(), lease.fencingToken());
                    }
                })
                .onErrorResume(e -> {
                    log.warn("the release of lock '{}' (token {}) after a cancelled critical section was not confirmed;"
                            + " it expires within its TTL", lease.name(), lease.fencingToken(), e);
                    return Mono.empty();
                })
                .then();
    }

    /** After a completed run: empty, or the error its release ended with. */
    public <T> Mono<T> verdict() {
        return Mono.defer(() -> {
            Throwable f = failure;
            return f == null ? Mono.empty() : Mono.error(f);
        });
    }

    /** Releases when subscribed; completes with the outcome on a Warden thread. */
    public static Mono<ReleaseOutcome> release(Lease lease) {
        return Mono.fromCompletionStage(lease::releaseAsync);
    }

    private static LockException lost(Lease lease) {
        return new LockException(LockException.Reason.LOST, "lock '" + lease.name() + "' (token " + lease.fencingToken()
                + ") was lost before the critical section ended: it was not protected to its end");
    }
}
