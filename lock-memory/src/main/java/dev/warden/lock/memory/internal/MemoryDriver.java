package dev.warden.lock.memory.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenFloorDriver;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The in-memory driver: a client's view of one {@link MemoryStore}, with one daemon thread that
 * completes its attempts' waits (never the thread of the client whose release woke them) and runs
 * their expiry timers. Renewals and releases answer at once, on the caller's thread.
 *
 * <p>Concurrency: {@code attempts} is concurrent, {@code closed} atomic, the rest final.
 */
public final class MemoryDriver implements TokenFloorDriver, EpochRecordingDriver, HolderEvictingDriver, HolderListingDriver,
        SharedLockDriver, LeaseCachingDriver {

    private static final AtomicInteger DRIVERS = new AtomicInteger();

    private final MemoryStore store;
    private final String namespace;
    private final ScheduledThreadPoolExecutor executor;
    private final Set<MemoryAttempt> attempts = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();

    private MemoryDriver(MemoryStore store, String namespace) {
        this.store = store;
        this.namespace = namespace;
        executor = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "warden-memory-" + DRIVERS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        executor.setRemoveOnCancelPolicy(true);
    }

    /** A driver on the store its one endpoint names. */
    public static MemoryDriver open(LockConfig config) {
        return new MemoryDriver(MemoryStore.named(Endpoints.storeName(config.endpoints().get(0))), config.namespace());
    }

    /** The store key of a lock: namespaces hold no '/', so no two (namespace, name) pairs share one. */
    public static String key(String namespace, String name) {
        return namespace + "/" + name;
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        if (closed.get()) {
            throw closedException();
        }
        MemoryAttempt attempt = new MemoryAttempt(this, key(namespace, name), owner);
        attempts.add(attempt);
        return attempt;
    }

    @Override
    public LockAttempt attemptShared(String name, String owner, Share share) {
        if (closed.get()) {
            throw closedException();
        }
        MemoryAttempt attempt = new MemoryAttempt(this, key(namespace, name), owner, share);
        attempts.add(attempt);
        return attempt;
    }

    /**
     * Tells {@code asked}, on this driver's thread, of every contender that queues for the lock, and of those
     * queued already. The token floor is the store's counter, so lock-api reserves a kept hold's block by
     * raising it.
     */
    @Override
    public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
        if (!(grant instanceof MemoryGrant g) || g.shared()) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL,
                    "contenders are watched for locks only, not for a share of a shared name"));
        }
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        Runnable stop = store.watchContenders(g.key(), () -> {
            try {
                executor.execute(asked);
            } catch (RejectedExecutionException closing) {
                // The driver closed: the client let go of what it kept first.
            }
        });
        AtomicBoolean stopped = new AtomicBoolean();
        return CompletableFuture.completedFuture(() -> {
            if (stopped.compareAndSet(false, true)) {
                stop.run();
            }
        });
    }

    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        MemoryGrant g = (MemoryGrant) grant;
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(g.shared() ? store.shares().renew(g.key(), g.fencingToken(), ttl.toNanos())
                : store.renew(g.key(), g.fencingToken(), ttl.toNanos()));
    }

    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        MemoryGrant g = (MemoryGrant) grant;
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(g.shared() ? store.shares().release(g.key(), g.fencingToken())
                : store.release(g.key(), g.fencingToken()));
    }

    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(store.holder(key(namespace, name)));
    }

    @Override
    public CompletionStage<List<NamedHolder>> holders(Duration limit) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(store.holders(key(namespace, "")));
    }

    @Override
    public CompletionStage<Boolean> evict(String name, long token) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(store.evict(key(namespace, name), token));
    }

    @Override
    public CompletionStage<Boolean> evicted(Grant grant) {
        MemoryGrant g = (MemoryGrant) grant;
        if (g.shared()) {
            return CompletableFuture.completedFuture(false);
        }
        return CompletableFuture.completedFuture(store.evicted(g.key(), g.fencingToken()));
    }

    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        MemoryGrant g = (MemoryGrant) grant;
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(store.raiseFloor(g.key(), g.fencingToken(), floor));
    }

    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(closedException());
        }
        return CompletableFuture.completedFuture(store.recordEpoch(namespace, epoch));
    }

    /** Waiting attempts fail with CLOSED and leave their queues; grants still held expire after their TTL. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        List.copyOf(attempts).forEach(MemoryAttempt::closed);
        executor.shutdownNow();
        try {
            executor.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    MemoryStore store() {
        return store;
    }

    boolean isClosed() {
        return closed.get();
    }

    void forget(MemoryAttempt attempt) {
        attempts.remove(attempt);
    }

    /** Runs on the driver's thread; dropped once it is shut down (the attempts were failed by close). */
    void execute(Runnable task) {
        try {
            executor.execute(task);
        } catch (RejectedExecutionException closedMeanwhile) {
            // Nothing waits any more.
        }
    }

    Future<?> schedule(Runnable task, long delayNanos) {
        try {
            return executor.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException closedMeanwhile) {
            return CompletableFuture.completedFuture(null);
        }
    }

    static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the lock client is closed");
    }

    @Override
    public String toString() {
        return "MemoryDriver[" + store + "]";
    }
}
