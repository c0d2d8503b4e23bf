package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.TxnResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender's place in a shared name's queue ({@link SharedQueue}), made like a lock's place
 * ({@link EtcdAttempt}): the first poll creates the entry on the session's lease, only if neither it
 * nor the attempt's marker exists, and reads the queue in the same transaction; later polls read the
 * entry and the queue ahead of it. Granted when the weights ahead and its own fit its share; the TTL
 * counts from the session's last confirmed keep-alive. The entry's key comes from {@link SharedSlots};
 * an entry of ours already there is a leftover (a release or abandon not confirmed yet, a late creation),
 * deleted guarded by its create revision before creating ours, so it never passes its place on.
 * An abandoned entry whose creation was never confirmed is deleted by value and fenced by the marker.
 * {@link #changed()} is a {@link SharedWait}.
 *
 * <p>Each poll is one transaction while the entries ahead fit in one page of {@value SharedQueue#PAGE}
 * (or the first page already does not fit), and one range more per further page.
 *
 * <p>Concurrency: every mutable field is guarded by {@code this}; lock-api never runs two calls of one
 * attempt at once, but answers, watch events and session losses arrive on other threads.
 */
final class SharedAttempt implements LockAttempt {

    private static final Logger log = LoggerFactory.getLogger(SharedAttempt.class);
    /** Leftovers removed before giving up on creating the entry. */
    private static final int LEFTOVERS = 3;

    private enum Created { NO, UNKNOWN, YES }

    /** What a create does when the server no longer knows its session's lease. */
    private enum LeaseGone { NEW_SESSION_ONCE, FAIL }

    private final EtcdDriver driver;
    private final SharedLocks locks;
    private final String prefix;
    private final ByteString prefixBytes;
    private final ByteString prefixEnd;
    private final ByteString markerBytes;
    /** The entry's value: the weight, the owner and this attempt's id. */
    private final ByteString valueBytes;
    private final Share share;

    private Session session;
    private SharedSlots.Slot slot;
    private String key;
    private ByteString keyBytes;
    private Created created = Created.NO;
    private long createRevision;
    private SharedQueue.Ahead ahead;
    private SharedWait waiting;

    SharedAttempt(EtcdDriver driver, SharedLocks locks, String prefix, String marker, ByteString value, Share share) {
        this.driver = driver;
        this.locks = locks;
        this.prefix = prefix;
        this.prefixBytes = Requests.bytes(prefix);
        this.prefixEnd = Requests.prefixEnd(prefixBytes);
        this.markerBytes = Requests.bytes(marker);
        this.valueBytes = value;
        this.share = share;
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        synchronized (this) {
            if (created == Created.NO) {
                return driver.session().thenCompose(s -> create(s, LeaseGone.NEW_SESSION_ONCE, LEFTOVERS));
            }
        }
        return recheck();
    }

    /** As {@link EtcdAttempt}'s creation, on a slot's key, reading the queue's first page with it. */
    private CompletableFuture<Optional<Grant>> create(Session s, LeaseGone leaseGone, int leftovers) {
        String k;
        ByteString kb;
        synchronized (this) {
            if (session != s || slot == null) {
                locks.slots().free(slot);
                slot = locks.slots().take(prefix, s);
            }
            session = s;
            key = slot.key();
            keyBytes = Requests.bytes(key);
            created = Created.UNKNOWN;
            k = key;
            kb = keyBytes;
        }
        CompletableFuture<TxnResponse> txn = driver.calls().unary("queueing for " + prefix, KVGrpc.getTxnMethod(),
                SharedQueue.create(markerBytes, kb, valueBytes, s.leaseId(), prefixBytes, prefixEnd));
        CompletableFuture<Optional<Grant>> decided = txn.thenCompose(r -> {
            if (r.getSucceeded()) {
                RangeResponse own = r.getResponses(1).getResponseRange();
                if (own.getKvsCount() == 0) {
                    throw new LockException(LockException.Reason.PROTOCOL, "etcd did not return shared queue entry " + k
                            + " in the transaction that created it");
                }
                long mine = own.getKvs(0).getCreateRevision();
                synchronized (this) {
                    created = Created.YES;
                    createRevision = mine;
                }
                return decide(s, SharedQueue.ahead(driver.calls(), prefix, prefixBytes, prefixEnd, mine, share,
                        r.getResponses(2).getResponseRange(), r.getHeader().getRevision()));
            }
            synchronized (this) {
                // A compare failed: the transaction wrote nothing.
                created = Created.NO;
            }
            if (r.getResponses(1).getResponseRange().getKvsCount() > 0) {
                throw new LockException(LockException.Reason.UNAVAILABLE, "shared queue entry " + k
                        + " was abandoned before it was created");
            }
            if (leftovers == 0) {
                throw new LockException(LockException.Reason.UNAVAILABLE, "shared queue entry " + k
                        + " kept reappearing: earlier attempts of this client are still creating it");
            }
            RangeResponse existing = r.getResponses(0).getResponseRange();
            if (existing.getKvsCount() == 0) {
                return create(s, LeaseGone.FAIL, leftovers - 1);
            }
            long stale = existing.getKvs(0).getCreateRevision();
            log.debug("removing {} (create revision {}), left over by an earlier attempt of this client", k, stale);
            return driver.guardedDelete(k, stale).thenCompose(deleted -> create(s, LeaseGone.FAIL, leftovers - 1));
        });
        if (leaseGone == LeaseGone.FAIL) {
            return decided;
        }
        return decided.handle((grant, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(grant);
            }
            if (!EtcdErrors.leaseNotFound(error)) {
                return CompletableFuture.<Optional<Grant>>failedFuture(error);
            }
            synchronized (this) {
                // The server refused the whole transaction: nothing was created.
                created = Created.NO;
            }
            s.lose(new LockException(LockException.Reason.UNAVAILABLE, "etcd lease " + Long.toHexString(s.leaseId())
                    + " is gone (expired or revoked on the server)", EtcdErrors.unwrap(error)));
            return driver.session().thenCompose(next -> create(next, LeaseGone.FAIL, leftovers));
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Optional<Grant>> recheck() {
        Session s;
        long mine;
        ByteString kb;
        synchronized (this) {
            s = session;
            mine = createRevision;
            kb = keyBytes;
        }
        if (!s.isAlive()) {
            return CompletableFuture.failedFuture(entryLost("its etcd lease was lost"));
        }
        CompletableFuture<TxnResponse> txn = driver.calls().unary("a read of shared queue " + prefix, KVGrpc.getTxnMethod(),
                SharedQueue.recheck(kb, mine, prefixBytes, prefixEnd));
        CompletableFuture<SharedQueue.Ahead> read = txn.thenCompose(r -> {
            RangeResponse own = r.getResponses(0).getResponseRange();
            if (own.getKvsCount() == 0 || own.getKvs(0).getCreateRevision() != mine) {
                // Most likely its lease ended: ask the server, so the session is lost (and the next
                // acquisition takes a new lease) before this one fails.
                return s.keepAliveOnce().handle((v, error) -> {
                    throw entryLost("its queue entry is gone (its lease expired, or it was deleted)");
                });
            }
            return SharedQueue.ahead(driver.calls(), prefix, prefixBytes, prefixEnd, mine, share,
                    r.getResponses(1).getResponseRange(), r.getHeader().getRevision());
        });
        return decide(s, read);
    }

    /** Granted when what is ahead fits and the session is alive, as a lock's grant. */
    private CompletableFuture<Optional<Grant>> decide(Session s, CompletableFuture<SharedQueue.Ahead> read) {
        return read.thenApply(found -> {
            String k;
            long rev;
            SharedSlots.Slot sl;
            synchronized (this) {
                ahead = found;
                if (!found.fits(share)) {
                    return Optional.<Grant>empty();
                }
                k = key;
                rev = createRevision;
                sl = slot;
            }
            long confirmed = s.confirmedSentAt();
            if (!s.isAlive()) {
                throw entryLost("its etcd lease was lost");
            }
            return Optional.<Grant>of(new SharedGrant(k, rev, valueBytes, s, confirmed, sl));
        });
    }

    /** The entry's key, null before the first poll. */
    synchronized String key() {
        return key;
    }

    private LockException entryLost(String why) {
        return new LockException(LockException.Reason.UNAVAILABLE, "waiting for shared queue " + prefix + " stopped: " + why);
    }

    @Override
    public CompletionStage<Void> changed() {
        SharedQueue.Ahead found;
        Session s;
        ByteString kb;
        SharedWait w;
        synchronized (this) {
            found = ahead;
            s = session;
            kb = keyBytes;
            if (found == null || found.fits(share)) {
                return CompletableFuture.completedFuture(null);
            }
            w = new SharedWait(driver.calls(), share, kb, found);
            waiting = w;
        }
        return w.start(locks, s, prefix, prefixBytes, prefixEnd, found.revision() + 1, driver.config().ttl().toNanos(),
                cause -> entryLost("its etcd lease was lost: " + cause.getMessage()));
    }

    /**
     * Stops waiting and removes the entry: guarded by its create revision once created, else by this
     * attempt's value with the marker written (as {@link EtcdAttempt#abandon}). The slot is freed once the
     * server answered (see {@link SharedLocks#release}).
     */
    @Override
    public CompletionStage<Void> abandon() {
        Created state;
        long rev;
        Session s;
        String k;
        ByteString kb;
        SharedWait w;
        SharedSlots.Slot sl;
        synchronized (this) {
            state = created;
            rev = createRevision;
            s = session;
            k = key;
            kb = keyBytes;
            w = waiting;
            waiting = null;
            sl = slot;
        }
        if (w != null) {
            w.cancel();
        }
        CompletableFuture<Void> done = switch (state) {
            case NO -> CompletableFuture.completedFuture(null);
            case YES -> driver.cleanUp("abandoning " + k, () -> driver.guardedDelete(k, rev), s);
            case UNKNOWN -> driver.cleanUp("abandoning unconfirmed " + k, () -> driver.calls().unary("abandoning " + k,
                    KVGrpc.getTxnMethod(), Requests.deleteIfOwnedAndMark(kb, valueBytes, markerBytes, s.leaseId())), s);
        };
        done.whenComplete((v, error) -> locks.slots().free(sl));
        return done;
    }
}
