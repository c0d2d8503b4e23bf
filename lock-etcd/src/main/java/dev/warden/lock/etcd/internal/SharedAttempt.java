package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.spi.Share;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.TxnResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * {@link #changed()} is a {@link SharedWait} on the name's one watch in this driver ({@link SharedWatch}).
 * The creation, the recheck, the grant's timing and the abandon are {@link QueuedAttempt}'s, as a lock's;
 * this class keeps the slot, the share's reads and rule, and the wait.
 *
 * <p>Each poll is one transaction while the entries ahead fit in one page of {@value SharedQueue#PAGE}
 * (or the first page already does not fit), and one range more per further page; a poll after a wait
 * that proved the grant ({@link #proven()}) is none. So a contended acquisition costs the creation,
 * its release, and one deletion told by the name's watch: two transactions, where waking every waiter
 * on any deletion ahead, a watch each, and a read before each grant cost about five calls.
 *
 * <p>Concurrency: every mutable field, here and in {@link QueuedAttempt}, is guarded by {@code this};
 * lock-api never runs two calls of one attempt at once, but answers, watch events and session losses
 * arrive on other threads.
 */
final class SharedAttempt extends QueuedAttempt<SharedQueue.Ahead> {

    private static final Logger log = LoggerFactory.getLogger(SharedAttempt.class);

    private final SharedLocks locks;
    private final Share share;

    private SharedSlots.Slot slot;
    private SharedQueue.Ahead ahead;
    private SharedWait waiting;

    SharedAttempt(EtcdDriver driver, SharedLocks locks, String prefix, String marker, ByteString value, Share share) {
        super(driver, Kind.SHARED, prefix, marker, value, log);
        this.locks = locks;
        this.share = share;
    }

    /** The slot's key: the same slot while the session lasts, another one on a new session. */
    @Override
    String keyOn(Session s) {
        if (session() != s || slot == null) {
            locks.slots().free(slot);
            slot = locks.slots().take(prefix, s);
        }
        return slot.key();
    }

    /** Creates the entry and reads the queue's first page with it. */
    @Override
    TxnRequest createRequest(ByteString kb, Session s) {
        return SharedQueue.create(markerBytes, kb, valueBytes, s.leaseId(), prefixBytes, prefixEnd);
    }

    @Override
    long createdRevision(TxnResponse r, ByteString kb) {
        RangeResponse own = r.getResponses(1).getResponseRange();
        return own.getKvsCount() == 0 ? 0 : own.getKvs(0).getCreateRevision();
    }

    @Override
    TxnRequest recheckRequest(ByteString kb, long mine) {
        return SharedQueue.recheck(kb, mine, prefixBytes, prefixEnd);
    }

    @Override
    CompletableFuture<SharedQueue.Ahead> ahead(TxnResponse r, long mine, boolean creation) {
        return SharedQueue.ahead(driver.calls(), prefix, prefixBytes, prefixEnd, mine, share,
                r.getResponses(creation ? 2 : 1).getResponseRange(), r.getHeader().getRevision());
    }

    /** Granted when what is ahead fits; the slot goes with the grant, freed when it is released. */
    @Override
    Granting noted(SharedQueue.Ahead found) {
        ahead = found;
        if (!found.fits(share)) {
            return null;
        }
        SharedSlots.Slot sl = slot;
        return (k, rev, s, confirmed) -> new SharedGrant(k, rev, valueBytes, s, confirmed, sl);
    }

    /**
     * What the last wait proved: it completed because every entry ahead was known (the read saw them
     * all) and the deletions since, each from the name's watch at a revision after the read, left what
     * fits; our own entry's deletion was not among them. That is what a read would show: entries are
     * only ever created behind ours, so what fits at the last deletion fits later too, and our entry,
     * on a lease the session confirmed alive (decide() asks), is deleted only by this attempt or by
     * an operator, as after a read. It saves the read per grant that every waiter paid.
     */
    @Override
    SharedQueue.Ahead proven() {
        SharedWait w = waiting;
        waiting = null;
        return w == null ? null : w.admitted();
    }

    @Override
    public CompletionStage<Void> changed() {
        SharedQueue.Ahead found;
        Session s;
        ByteString kb;
        SharedWait w;
        synchronized (this) {
            found = ahead;
            s = session();
            kb = keyBytes();
            if (found == null || found.fits(share)) {
                return CompletableFuture.completedFuture(null);
            }
            w = new SharedWait(driver.calls(), share, kb, createRevision(), found);
            waiting = w;
        }
        return w.start(locks, s, prefix, driver.config().ttl().toNanos(),
                cause -> entryLost("its etcd lease was lost: " + cause.getMessage()));
    }

    /** Cancels the wait; the slot is freed once the server answered the removal (see {@link SharedLocks#release}). */
    @Override
    Stopping stopping() {
        SharedWait w = waiting;
        waiting = null;
        SharedSlots.Slot sl = slot;
        return new Stopping() {
            @Override
            public void stop() {
                if (w != null) {
                    w.cancel();
                }
            }

            @Override
            public void removed() {
                locks.slots().free(sl);
            }
        };
    }
}
