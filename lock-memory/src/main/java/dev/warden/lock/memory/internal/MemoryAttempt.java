package dev.warden.lock.memory.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * One contender, queued in the store from the start, like a ZooKeeper node. A poll grants a lock when
 * it is first and no live holder is left, a share when it fits behind those ahead. {@link #changed()} completes when the store says the lock or the
 * queue ahead changed, or, while a holder lives, when its TTL has passed: an expiry is not an event.
 *
 * <p>Concurrency: {@code ended}, {@code changedSincePoll}, {@code holderLeftNanos}, {@code waiting}
 * and {@code timer} are guarded by {@code this}; wake-ups arrive from other clients' threads.
 */
final class MemoryAttempt implements LockAttempt {

    private final MemoryDriver driver;
    private final MemoryQueue queue;
    private final String key;
    private final MemoryStore.Ticket ticket;

    private boolean ended;
    private boolean changedSincePoll;
    private long holderLeftNanos = -1;
    private CompletableFuture<Void> waiting;
    private Future<?> timer;

    /** A contender for a lock. */
    MemoryAttempt(MemoryDriver driver, String key, String owner) {
        this.driver = driver;
        this.queue = driver.store();
        this.key = key;
        this.ticket = driver.store().enqueue(key, owner, this::changedInStore);
    }

    /** A contender for {@code share} of a shared name. */
    MemoryAttempt(MemoryDriver driver, String key, String owner, Share share) {
        this.driver = driver;
        this.queue = driver.store().shares();
        this.key = key;
        this.ticket = driver.store().shares().enqueue(key, owner, this::changedInStore, share);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(MemoryDriver.closedException());
            }
            if (ended) {
                return CompletableFuture.failedFuture(new IllegalStateException("attempt on " + key + " has ended"));
            }
            changedSincePoll = false;
        }
        MemoryStore.Polled polled = queue.poll(key, ticket, ttl.toNanos());
        synchronized (this) {
            if (polled.grant() != null) {
                ended = true;
                driver.forget(this);
                return CompletableFuture.completedFuture(Optional.of(polled.grant()));
            }
            holderLeftNanos = polled.holderLeftNanos();
        }
        return CompletableFuture.completedFuture(Optional.empty());
    }

    @Override
    public synchronized CompletionStage<Void> changed() {
        if (driver.isClosed()) {
            return CompletableFuture.failedFuture(MemoryDriver.closedException());
        }
        if (ended || changedSincePoll) {
            changedSincePoll = false;
            return CompletableFuture.completedFuture(null);
        }
        CompletableFuture<Void> w = new CompletableFuture<>();
        waiting = w;
        if (holderLeftNanos >= 0) {
            // Just past the holder's expiry; a release before it wakes the queue sooner.
            timer = driver.schedule(this::changedInStore, holderLeftNanos + TimeUnit.MILLISECONDS.toNanos(1));
        }
        return w;
    }

    @Override
    public CompletionStage<Void> abandon() {
        CompletableFuture<Void> w;
        synchronized (this) {
            if (ended) {
                return CompletableFuture.completedFuture(null);
            }
            ended = true;
            w = takeWaiting();
        }
        driver.forget(this);
        queue.leave(key, ticket);
        if (w != null) {
            w.complete(null);
        }
        return CompletableFuture.completedFuture(null);
    }

    /** The driver closed: a pending wait fails with CLOSED, and the contender leaves the queue. */
    void closed() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = takeWaiting();
            ended = true;
        }
        queue.leave(key, ticket);
        if (w != null) {
            w.completeExceptionally(MemoryDriver.closedException());
        }
    }

    /** Told by the store (on another client's thread, maybe holding nothing of ours) or by the expiry timer. */
    private void changedInStore() {
        driver.execute(() -> {
            CompletableFuture<Void> w;
            synchronized (this) {
                w = takeWaiting();
                if (w == null) {
                    changedSincePoll = true;
                    return;
                }
            }
            w.complete(null);
        });
    }

    /** Called with the monitor held. */
    private CompletableFuture<Void> takeWaiting() {
        CompletableFuture<Void> w = waiting;
        waiting = null;
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        return w;
    }
}
