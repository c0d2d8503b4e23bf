package dev.warden.lock.internal.migration;

import dev.warden.lock.LockException;
import dev.warden.lock.internal.time.SystemTimekeeper;
import dev.warden.lock.internal.time.Timekeeper;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.HolderReadingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The driver of a client in the middle step of a switch between backends
 * ({@code warden.lock.migrate-from}): every acquisition takes the lock on the backend being left and
 * then on the backend moved to ({@link MigratingAttempt}), so it excludes instances still on the old
 * configuration and instances already on the new one. A lease is renewed and released on both and is
 * lost when either is. Its token is the larger of the two backends' tokens, and the other backend's
 * token floor is raised to it before the lease is shown, so every later grant on either backend, by
 * any step's instance, gets a larger token ({@link TokenFloorDriver}).
 *
 * <p>A lock nobody takes during the migrating step is tied too: a backend's floor covers its whole
 * namespace (etcd, ZooKeeper, memory: their counters rise across all locks), or its tokens are its
 * server's clock in microseconds (Redis), far above any other backend's counter; and the driver takes a
 * lock of its own ({@link #SYNC_NAME}) when it opens and once every TTL, so the floors follow both
 * backends' counters even while the application takes no lock. A grant on the backend being left that
 * was made before the last such turn is below every later grant on the backend moved to, and the other
 * way round.
 *
 * <p>Concurrency: {@code closed} is volatile, the sync counters atomic; the rest is immutable after
 * construction, and the two drivers are thread-safe.
 */
public final class MigratingDriver implements EpochRecordingDriver, HolderListingDriver {

    /** The lock a migrating client takes once every TTL to tie the two backends' floors. */
    static final String SYNC_NAME = "warden-token-floor-sync";
    private static final Logger log = LoggerFactory.getLogger(MigratingDriver.class);

    private final TokenFloorDriver from;
    private final String fromBackend;
    private final TokenFloorDriver to;
    private final String toBackend;
    private final Duration ttl;
    /** Renews first grants while their acquisitions wait for the second, and runs the sync turns. */
    private final Timekeeper time;
    /** Each sync turn is an acquisition of its own, with an owner of its own. */
    private final String syncOwner = "floor-sync-" + UUID.randomUUID();
    private final AtomicLong syncTurns = new AtomicLong();
    /** Sync turns failed in a row; the first of a streak is logged at WARN. */
    private final AtomicInteger syncFailures = new AtomicInteger();
    /** Set once by {@link #close()}; read by the sync turns. */
    private volatile boolean closed;

    private MigratingDriver(TokenFloorDriver from, String fromBackend, TokenFloorDriver to, String toBackend, Duration ttl,
                            Timekeeper time) {
        this.from = from;
        this.fromBackend = fromBackend;
        this.to = to;
        this.toBackend = toBackend;
        this.ttl = ttl;
        this.time = time;
    }

    /**
     * A driver over two open drivers; both must raise token floors. On refusal both are closed.
     *
     * @throws LockException {@code CONFIGURATION} when either backend's driver cannot raise token floors
     */
    public static MigratingDriver of(LockDriver from, String fromBackend, LockDriver to, String toBackend, Duration ttl) {
        return of(from, fromBackend, to, toBackend, ttl, () -> new SystemTimekeeper("warden-migration-" + fromBackend + "-" + toBackend));
    }

    /** The same, on the timekeeper {@code time} makes: tests pass a virtual clock. */
    static MigratingDriver of(LockDriver from, String fromBackend, LockDriver to, String toBackend, Duration ttl,
                              Supplier<Timekeeper> time) {
        if (from instanceof TokenFloorDriver f && to instanceof TokenFloorDriver t) {
            MigratingDriver driver = new MigratingDriver(f, fromBackend, t, toBackend, ttl, time.get());
            driver.time.schedule(driver::sync, 0);
            return driver;
        }
        String which = from instanceof TokenFloorDriver ? toBackend : fromBackend;
        from.close();
        to.close();
        throw new LockException(LockException.Reason.CONFIGURATION, "the " + which + " backend cannot take part in a"
                + " migration: its driver does not raise token floors (dev.warden.lock.spi.TokenFloorDriver), so tokens"
                + " of the two backends could not be ordered");
    }

    TokenFloorDriver from() {
        return from;
    }

    TokenFloorDriver to() {
        return to;
    }

    String fromBackend() {
        return fromBackend;
    }

    String toBackend() {
        return toBackend;
    }

    Timekeeper time() {
        return time;
    }

    /**
     * One turn on {@link #SYNC_NAME}: its grant raises the lower backend's floor like any other; when another
     * client holds it, that client is tying the floors. Then the next turn, one TTL later.
     */
    private void sync() {
        if (closed) {
            return;
        }
        MigratingAttempt attempt;
        try {
            attempt = new MigratingAttempt(this, SYNC_NAME, syncOwner + "-" + syncTurns.incrementAndGet());
        } catch (RuntimeException e) {
            syncFailed(e);
            time.schedule(this::sync, ttl.toNanos());
            return;
        }
        attempt.poll(ttl).toCompletableFuture().handle((granted, error) -> {
            if (error != null) {
                syncFailed(error);
            } else {
                syncFailures.set(0);
            }
            return error == null && granted.isPresent() ? release(granted.get()).handle((v, e) -> null)
                    : attempt.abandon().handle((v, e) -> null);
        }).thenCompose(f -> f).whenComplete((v, e) -> {
            if (!closed) {
                time.schedule(this::sync, ttl.toNanos());
            }
        });
    }

    /** Locks nobody takes stay untied while this lasts: said once per streak, not once per TTL. */
    private void syncFailed(Throwable error) {
        if (syncFailures.getAndIncrement() == 0) {
            log.warn("could not tie the token floors of {} and {} (trying again every {}); locks nobody takes meanwhile"
                    + " are not ordered across the two backends", fromBackend, toBackend, ttl, error);
        } else {
            log.debug("could not tie the token floors of {} and {}", fromBackend, toBackend, error);
        }
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        return new MigratingAttempt(this, name, owner);
    }

    /** Renews both; renewed only when both are. */
    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        MigratingGrant g = (MigratingGrant) grant;
        return both(from.renew(g.from(), ttl), to.renew(g.to(), ttl));
    }

    /** Releases both, the backend moved to first; true only when both were still this grant's. */
    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        MigratingGrant g = (MigratingGrant) grant;
        return both(to.release(g.to()), from.release(g.from()));
    }

    /** Both answers; a failure of either fails the whole, after both have answered. */
    private static CompletableFuture<Boolean> both(CompletionStage<Boolean> a, CompletionStage<Boolean> b) {
        CompletableFuture<Boolean> fa = a.toCompletableFuture();
        CompletableFuture<Boolean> fb = b.toCompletableFuture();
        return CompletableFuture.allOf(fa, fb).handle((v, error) -> error).thenCompose(error -> error != null
                ? CompletableFuture.<Boolean>failedFuture(error)
                : CompletableFuture.completedFuture(fa.join() && fb.join()));
    }

    /** Records the epoch on each backend that keeps one; the higher of what they had recorded. */
    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        CompletableFuture<Integer> left = from instanceof EpochRecordingDriver r
                ? r.recordEpoch(epoch).toCompletableFuture() : CompletableFuture.completedFuture(0);
        CompletableFuture<Integer> moved = to instanceof EpochRecordingDriver r
                ? r.recordEpoch(epoch).toCompletableFuture() : CompletableFuture.completedFuture(0);
        return left.thenCombine(moved, Math::max);
    }

    /**
     * The holder on the backend left (every migrating acquisition takes it first, and instances of the
     * step before use it alone), else on the backend moved to; its token the larger of the two, as a
     * migrating grant's is.
     */
    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        if (!(from instanceof HolderReadingDriver left) || !(to instanceof HolderReadingDriver moved)) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.CONFIGURATION,
                    "the " + (from instanceof HolderReadingDriver ? toBackend : fromBackend) + " driver cannot read a lock's holder"));
        }
        return left.holder(name).toCompletableFuture().thenCombine(moved.holder(name), (a, b) -> {
            if (a.isEmpty()) {
                return b;
            }
            long token = b.map(h -> Math.max(h.token(), a.get().token())).orElse(a.get().token());
            return Optional.of(new Holder(a.get().owner(), token));
        });
    }

    /**
     * The holders on the backend left, where every migrating acquisition and every instance of the step
     * before takes its locks; each token as read there (a migrating grant's own is the larger of its two). The
     * step's floor-sync lock is left out.
     */
    @Override
    public CompletionStage<java.util.List<NamedHolder>> holders(Duration limit) {
        if (!(from instanceof HolderListingDriver left)) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.CONFIGURATION,
                    "the " + fromBackend + " driver cannot list a namespace's holders"));
        }
        // The step's own floor-sync lock is Warden's bookkeeping, not an application's hold.
        return left.holders(limit).thenApply(all -> all.stream().filter(h -> !h.name().equals(SYNC_NAME)).toList());
    }

    /** A lost session on either backend loses the grants it carried; lock-api ends every lease of the client. */
    @Override
    public void onSessionLost(Consumer<Throwable> listener) {
        from.onSessionLost(listener);
        to.onSessionLost(listener);
    }

    @Override
    public void close() {
        closed = true;
        if (time instanceof SystemTimekeeper own) {
            try {
                own.shutdown(Duration.ZERO);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            to.close();
        } finally {
            from.close();
        }
    }

    @Override
    public String toString() {
        return "MigratingDriver[" + from + " then " + to + "]";
    }
}
