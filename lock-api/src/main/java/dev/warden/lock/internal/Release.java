package dev.warden.lock.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HandOff;
import dev.warden.lock.spi.HandOffDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * The server step of releasing a held lock: wait for a renewal in flight (no renewal lands after
 * release returns), then compare-and-delete, or, when the driver is a {@link HandOffDriver} and a
 * contender of this client waits, hand the lock straight on; then pass the local turn. Stateless:
 * everything it touches belongs to the {@link HeldLock} it is given.
 */
final class Release {

    private static final Logger log = LoggerFactory.getLogger(Release.class);

    private Release() {
    }

    static void start(HeldLock held, HeldLock.Releaser releaser, CompletableFuture<Boolean> pendingRenewal,
                      CompletableFuture<ReleaseOutcome> result) {
        ClientParts parts = held.parts();
        parts.observer().releasing(held.name(), held.token());
        // A contender waiting in this client may take the lock over in the same server step.
        HandOffDriver handOffs = parts.leases() instanceof HandOffDriver h ? h : null;
        LocalQueue.Waiter next = releaser == HeldLock.Releaser.HOLDER && handOffs != null
                ? held.queuePermit().claimNext() : null;
        long[] handOffSentAt = new long[1];
        quiet(pendingRenewal).thenCompose(v -> {
            if (next == null) {
                return parts.leases().release(held.grant())
                        .thenApply(removed -> Boolean.TRUE.equals(removed) ? HandOff.releasedOnly() : HandOff.notOwner());
            }
            handOffSentAt[0] = parts.time().nanoTime();
            return handOffs.handOff(held.grant(), next.owner(), held.ttl());
        }).whenComplete((handOff, error) -> {
            held.released(releaser, error);
            passTurn(held, next, error == null && handOff instanceof HandOff.To to ? to.next() : null, handOffSentAt[0]);
            if (error != null) {
                result.completeExceptionally(new LockException(LockException.Reason.UNAVAILABLE, "release of lock '"
                        + held.name() + "' was not confirmed; it expires on the server within its TTL", unwrap(error)));
                return;
            }
            ReleaseOutcome outcome = handOff instanceof HandOff.NotOwner ? ReleaseOutcome.LOST : ReleaseOutcome.RELEASED;
            parts.observer().released(held.name(), held.token(), outcome);
            result.complete(outcome);
        });
    }

    /** Releases one hold of {@code held}, blocking: see {@link #await}. */
    static ReleaseOutcome one(HeldLock held) {
        return await(held, held.release(HeldLock.Holds.ONE, HeldLock.Releaser.HOLDER));
    }

    /** Releases every hold without waiting, on a driver thread where blocking could starve the reply it waits for. */
    static void inBackground(HeldLock held, HeldLock.Releaser releaser) {
        held.release(HeldLock.Holds.ALL, releaser).whenComplete((outcome, error) -> {
            if (error != null) {
                log.warn("could not release lock '{}' (token {}); it expires within its TTL", held.name(), held.token(), error);
            }
        });
    }

    /**
     * A lost lease: compare-and-delete whatever of it the server still keeps, so the next holder need not
     * wait out its TTL. At its maximum hold time the lock is still held, and the release is what frees it;
     * after any other loss it usually finds nothing of this grant's, but a grant on a backend that is still
     * reachable may remain (the half of a migrating lease whose other half was lost lives on with its
     * session), and the compare keeps it from touching anyone else's.
     */
    static void freeOnServer(HeldLock held, CompletableFuture<Boolean> pendingRenewal, LostReason reason) {
        quiet(pendingRenewal).thenCompose(v -> held.parts().releaseOnServer(held.grant())).whenComplete((removed, error) -> {
            if (error == null) {
                return;
            }
            if (reason == LostReason.MAX_HOLD_TIME) {
                log.warn("could not release lock '{}' (token {}) at its maximum hold time; it expires within its TTL",
                        held.name(), held.token(), error);
            } else {
                log.debug("could not release lock '{}' (token {}) after its loss ({}); it expires within its TTL",
                        held.name(), held.token(), reason, error);
            }
        });
    }

    /** Passes the local turn on: with the grant the hand-off made for the claimed waiter, if any. */
    private static void passTurn(HeldLock held, LocalQueue.Waiter next, Grant handedOn, long sentAtNanos) {
        LocalQueue.Permit permit = held.queuePermit();
        if (next == null) {
            permit.run();
        } else if (handedOn == null) {
            permit.unclaim(next);
            permit.run();
        } else if (!permit.handTo(next, handedOn, sentAtNanos)) {
            // The waiter gave up while the hand-off was on the wire.
            held.parts().releaseOnServer(handedOn).whenComplete((r, e) -> {
                if (e != null) {
                    log.warn("could not release lock '{}' handed to a waiter that gave up; it expires within its TTL",
                            held.name(), e);
                }
            });
        }
    }

    /** Blocks for a release through interrupts (re-asserted afterwards): once started it must finish. */
    static ReleaseOutcome await(HeldLock held, CompletableFuture<ReleaseOutcome> f) {
        // Drivers bound every call; this limit only guards against a driver that breaks that promise.
        Duration limit = held.parts().config().requestTimeout().multipliedBy(3);
        try {
            return Await.uninterruptibly(f, limit);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LockException le) {
                throw new LockException(le.reason(), le.getMessage(), le.getCause());
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "release of lock '" + held.name()
                    + "' was not confirmed; it expires on the server within its TTL", e.getCause());
        } catch (TimeoutException e) {
            throw new LockException(LockException.Reason.UNAVAILABLE, "release of lock '" + held.name()
                    + "' timed out; it expires on the server within its TTL", e);
        }
    }

    /** Completes when {@code call} does, whatever its outcome. */
    private static CompletableFuture<Void> quiet(CompletableFuture<?> call) {
        return call == null ? CompletableFuture.completedFuture(null) : call.handle((ok, error) -> null);
    }

    private static Throwable unwrap(Throwable error) {
        return error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    }
}
