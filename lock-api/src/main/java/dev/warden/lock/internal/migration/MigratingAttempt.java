package dev.warden.lock.internal.migration;

import dev.warden.lock.LockException;
import dev.warden.lock.internal.time.Timekeeper;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One migrating contender: first the lock on the backend being left, then on the backend moved to,
 * always in that order, so two migrating clients never hold one each and wait for the other. While it
 * waits for the second lock, and until the token floor is raised, it keeps the first renewed itself
 * (lock-api renews only what it was given); losing it fails the attempt, whose {@link #abandon()} then
 * releases what it holds. The grant it finally returns carries the larger of the two tokens, made the
 * other backend's floor first, and counts from the first grant's last confirmed renewal.
 *
 * <p>Concurrency: every mutable field is guarded by {@code this}; lock-api never runs two calls of one
 * attempt at once, but renewals of the first grant complete on the drivers' threads.
 */
final class MigratingAttempt implements LockAttempt {

    private final MigratingDriver driver;
    private final String name;
    private final String owner;
    private final LockAttempt fromAttempt;

    private LockAttempt toAttempt;
    /** The grant on the backend being left, once taken. */
    private Grant fromGrant;
    /** When the server's clock for {@code fromGrant} last started: its poll or last confirmed renewal. */
    private long fromValidFrom;
    /** The grant on the backend moved to, between its poll and the hand-over of both. */
    private Grant toGrant;
    /** Why {@code fromGrant} can no longer be relied on, or null. */
    private LockException fromLost;
    /** The next renewal of {@code fromGrant} while the second lock is awaited, or null. */
    private Timekeeper.Alarm keeper;
    private CompletableFuture<Void> waiting;
    private boolean ended;

    MigratingAttempt(MigratingDriver driver, String name, String owner) {
        this.driver = driver;
        this.name = name;
        this.owner = owner;
        this.fromAttempt = driver.from().attempt(name, owner);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        boolean first;
        synchronized (this) {
            if (fromLost != null) {
                return CompletableFuture.failedFuture(fromLost);
            }
            first = fromGrant == null;
        }
        if (!first) {
            return pollTo(ttl);
        }
        long sentAt = driver.time().nanoTime();
        return fromAttempt.poll(ttl).thenCompose(granted -> {
            if (granted.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<Grant>empty());
            }
            Grant g = granted.get();
            long validFrom = g.validFromNanos(sentAt);
            synchronized (this) {
                fromGrant = g;
                fromValidFrom = validFrom - sentAt < 0 ? validFrom : sentAt;
                toAttempt = driver.to().attempt(name, owner);
                keeper = driver.time().schedule(() -> renewFrom(ttl), ttl.toNanos() / 3);
            }
            return pollTo(ttl);
        });
    }

    /**
     * Polls the second backend; when it grants, raises the floor of the one whose token is lower. The first
     * grant is kept renewed until the floor is in place, and the grant handed over is valid from its last
     * confirmed renewal: a slow floor raise must not eat into the lease lock-api starts to keep.
     */
    private CompletableFuture<Optional<Grant>> pollTo(Duration ttl) {
        LockAttempt a;
        synchronized (this) {
            a = toAttempt;
        }
        return a.poll(ttl).toCompletableFuture().thenCompose(granted -> {
            if (granted.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<Grant>empty());
            }
            Grant to = granted.get();
            Grant from;
            synchronized (this) {
                toGrant = to;
                if (fromLost != null) {
                    throw fromLost;
                }
                from = fromGrant;
            }
            long token = Math.max(from.fencingToken(), to.fencingToken());
            CompletionStage<Boolean> floor = from.fencingToken() < token ? driver.from().raiseTokenFloor(from, token)
                    : to.fencingToken() < token ? driver.to().raiseTokenFloor(to, token)
                    : CompletableFuture.completedFuture(true);
            return floor.thenApply(raised -> {
                if (!raised) {
                    throw new LockException(LockException.Reason.UNAVAILABLE, "lock '" + name
                            + "' was lost on one backend while its token floor was raised to " + token);
                }
                synchronized (this) {
                    stopKeeper();
                    if (fromLost != null) {
                        throw fromLost;
                    }
                    ended = true;
                    return Optional.<Grant>of(new MigratingGrant(from, to, fromValidFrom));
                }
            });
        });
    }

    /** Keeps the first grant alive while the second is awaited; its loss fails the attempt. */
    private void renewFrom(Duration ttl) {
        Grant g;
        synchronized (this) {
            if (ended || keeper == null || fromLost != null) {
                return;
            }
            g = fromGrant;
        }
        long sentAt = driver.time().nanoTime();
        CompletionStage<Boolean> renewed;
        try {
            renewed = driver.from().renew(g, ttl);
        } catch (RuntimeException e) {
            renewed = CompletableFuture.failedFuture(e);
        }
        renewed.whenComplete((ok, error) -> {
            boolean lost;
            synchronized (this) {
                if (error == null && ok) {
                    fromValidFrom = sentAt - fromValidFrom > 0 ? sentAt : fromValidFrom;
                }
                // A failed call proves nothing until the grant's TTL has run out without a confirmation.
                lost = (error == null && !ok) || driver.time().nanoTime() - fromValidFrom - ttl.toNanos() >= 0;
                if (!lost && !ended && keeper != null) {
                    keeper = driver.time().schedule(() -> renewFrom(ttl), ttl.toNanos() / 3);
                }
            }
            if (lost) {
                lose(new LockException(LockException.Reason.UNAVAILABLE, "lock '" + name + "' was lost on the "
                        + driver.fromBackend() + " backend while waiting for it on the " + driver.toBackend() + " backend",
                        error));
            }
        });
    }

    private void lose(LockException why) {
        CompletableFuture<Void> w;
        synchronized (this) {
            if (fromLost != null) {
                return;
            }
            fromLost = why;
            stopKeeper();
            w = waiting;
            waiting = null;
        }
        if (w != null) {
            w.completeExceptionally(why);
        }
    }

    @Override
    public CompletionStage<Void> changed() {
        LockAttempt a;
        CompletableFuture<Void> w = new CompletableFuture<>();
        synchronized (this) {
            if (fromGrant == null) {
                return fromAttempt.changed();
            }
            if (fromLost != null) {
                return CompletableFuture.failedFuture(fromLost);
            }
            a = toAttempt;
            waiting = w;
        }
        a.changed().whenComplete((v, error) -> {
            synchronized (this) {
                if (waiting == w) {
                    waiting = null;
                }
            }
            if (error != null) {
                w.completeExceptionally(error);
            } else {
                w.complete(null);
            }
        });
        return w;
    }

    /** Abandons the attempt still waiting, then releases what this attempt was granted. */
    @Override
    public CompletionStage<Void> abandon() {
        Grant from;
        Grant to;
        LockAttempt waitingOn;
        CompletableFuture<Void> w;
        synchronized (this) {
            ended = true;
            stopKeeper();
            from = fromGrant;
            to = toGrant;
            waitingOn = from == null ? fromAttempt : to == null ? toAttempt : null;
            w = waiting;
            waiting = null;
        }
        if (w != null) {
            w.complete(null);
        }
        CompletableFuture<Void> abandoned = waitingOn == null ? CompletableFuture.completedFuture(null)
                : quietly(() -> waitingOn.abandon());
        return abandoned
                .thenCompose(v -> to == null ? CompletableFuture.completedFuture(null) : quietly(() -> driver.to().release(to)))
                .thenCompose(v -> from == null ? CompletableFuture.completedFuture(null) : quietly(() -> driver.from().release(from)));
    }

    private static CompletableFuture<Void> quietly(java.util.function.Supplier<CompletionStage<?>> call) {
        CompletionStage<?> stage;
        try {
            stage = call.get();
        } catch (RuntimeException e) {
            stage = CompletableFuture.failedFuture(e);
        }
        return stage.toCompletableFuture().handle((v, error) -> null);
    }

    /** Called with the monitor held. */
    private void stopKeeper() {
        if (keeper != null) {
            keeper.cancel();
            keeper = null;
        }
    }

    @Override
    public String toString() {
        return "MigratingAttempt[" + name + ", " + driver.fromBackend() + " then " + driver.toBackend() + "]";
    }
}
