package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.TxnResponse;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The etcd driver's shared names (semaphores, read-write locks): attempts ({@link SharedAttempt}) on
 * the queue of {@link SharedQueue}, with keys from {@link SharedSlots}, their waits on each name's one
 * watch ({@link SharedWatch}), and the renewal and release of their grants. {@link EtcdDriver} only
 * dispatches here.
 *
 * <p>Concurrency: {@code slots} is thread-safe; {@code waits} is a concurrent set, {@code watches} a
 * concurrent map; {@code closed} is volatile.
 */
final class SharedLocks {

    private final EtcdDriver driver;
    private final SharedSlots slots = new SharedSlots();
    /** Pending waits of shared attempts, failed with {@code CLOSED} when the driver closes. */
    private final Set<CompletableFuture<Void>> waits = ConcurrentHashMap.newKeySet();
    /** The watch of each shared name someone of this driver waits on, by prefix. */
    private final Map<String, SharedWatch> watches = new ConcurrentHashMap<>();
    private volatile boolean closed;

    SharedLocks(EtcdDriver driver) {
        this.driver = driver;
    }

    LockAttempt attempt(String name, String owner, Share share, String unique) {
        String namespace = driver.config().namespace();
        return new SharedAttempt(driver, this, Keys.sharedPrefix(namespace, name), Keys.marker(namespace, unique),
                SharedQueue.value(share, owner, unique), share);
    }

    SharedSlots slots() {
        return slots;
    }

    /**
     * As a lock's renewal: a keep-alive of the grant's lease and a read of its entry, both sent now;
     * still ours when the lease is alive and the entry exists on it with the granted create revision
     * (the token) and value (the owner and attempt).
     */
    CompletableFuture<Boolean> renew(SharedGrant g, Duration ttl) {
        if (!g.session().isAlive()) {
            return CompletableFuture.completedFuture(false);
        }
        CompletableFuture<Void> alive = g.session().keepAliveOnce();
        CompletableFuture<Boolean> entryThere = driver.calls().unary("a renewal read of " + g.key(), KVGrpc.getRangeMethod(),
                Requests.get(Requests.bytes(g.key()))).thenApply(r -> r.getKvsCount() == 1
                && r.getKvs(0).getCreateRevision() == g.createRevision()
                && r.getKvs(0).getLease() == g.session().leaseId()
                && r.getKvs(0).getValue().equals(g.value()));
        return alive.handle((v, error) -> error).thenCombine(entryThere, (keepAliveError, there) -> {
            if (keepAliveError != null) {
                if (EtcdErrors.leaseNotFound(keepAliveError)) {
                    return false;
                }
                throw new CompletionException(keepAliveError);
            }
            return there;
        });
    }

    /**
     * One transaction deleting the entry while it is the grant's (create revision and value); its
     * deletion is what wakes the waiters behind. Unconfirmed, it is retried in the background while
     * the session lives. The slot is freed once the server answered, so a new attempt of this client
     * cannot take the entry for a leftover and delete it first (which would make this release say
     * false); after a failure an entry still there is a leftover to the slot's next user.
     */
    CompletableFuture<Boolean> release(SharedGrant g) {
        CompletableFuture<Boolean> done = delete(g).thenApply(TxnResponse::getSucceeded);
        done.whenComplete((removed, error) -> {
            slots.free(g.slot());
            if (error != null) {
                driver.retryInBackground("release of " + g.key(), () -> delete(g), g.session());
            }
        });
        return done;
    }

    private CompletableFuture<TxnResponse> delete(SharedGrant g) {
        return driver.writes().txn("a guarded delete of " + g.key(),
                SharedQueue.release(Requests.bytes(g.key()), g.createRevision(), g.value()));
    }

    /** Joins {@code wait} to the watch of the name under {@code prefix}, started for it if none runs. */
    SharedWatch join(String prefix, SharedWait wait) {
        while (true) {
            SharedWatch watch = watches.computeIfAbsent(prefix, p -> new SharedWatch(this, driver.calls(), p));
            if (watch.join(wait)) {
                return watch;
            }
            // It ended since it was looked up: make way for a new one.
            watches.remove(prefix, watch);
        }
    }

    /** Forgets {@code watch}, which ended, unless another already took its place. */
    void forget(String prefix, SharedWatch watch) {
        watches.remove(prefix, watch);
    }

    /** Fails {@code wait} with {@code CLOSED} when the driver closes (at once if it has). */
    void register(CompletableFuture<Void> wait) {
        waits.add(wait);
        wait.whenComplete((v, error) -> waits.remove(wait));
        if (closed) {
            wait.completeExceptionally(closedException());
        }
    }

    boolean closed() {
        return closed;
    }

    /** Fails every pending wait with {@code CLOSED}; called by the driver's close before the channel goes. */
    void close() {
        closed = true;
        for (CompletableFuture<Void> wait : waits) {
            wait.completeExceptionally(closedException());
        }
    }

    static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the etcd driver is closed");
    }
}
