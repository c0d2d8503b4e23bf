package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.TxnResponse;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One place in a lock's queue. The entry is {@code <prefix><lease>}: one key per session and lock,
 * reused by the session's successive attempts (lock-api runs one attempt per name and client at a
 * time), so the keys under a lock's prefix stay as few as its clients; a key per attempt would leave
 * a deleted key behind on every acquisition, and etcd walks every one of them, until a compaction,
 * in each read of the queue. The value is the acquisition's owner and this attempt's id: lock-api
 * retries an acquisition whose poll failed with a new attempt of the same owner, and the clean-up
 * of the failed one (retried in the background until confirmed) must never match the entry the
 * retry created and holds.
 *
 * <p>The first poll creates the entry, only if it does not exist, and in the same transaction reads
 * the two newest entries: ours and the one just ahead of it. An entry of ours that is still there
 * is a leftover of an earlier attempt of this client (a lost lease, an abandoned creation that
 * reached the server late): it is deleted, guarded by its create revision, and the entry created
 * again, so it can never pass its place (or its token) on. Later polls read our entry and the
 * newest entry created before it. No entry ahead means we hold the lock; its TTL counts from the
 * session's last confirmed keep-alive (the session keeps the lease alive, so a poll sends no
 * keep-alive of its own, but for a grant the client may keep: see {@link #confirming}). Otherwise {@link #changed()} watches the entry ahead from the revision
 * after our read, so its deletion cannot be missed, and completes when it goes.
 *
 * <p>Creation is guarded by a marker key unique to the attempt: an entry whose creation was never
 * confirmed (the call timed out) is abandoned by writing the marker and deleting the entry if it
 * holds this attempt's value, in one transaction, so a creation that reaches the server late finds
 * the marker and does nothing, and a later attempt's entry is never deleted.
 *
 * <p>The creation, the recheck, the grant's timing and the abandon are {@link QueuedAttempt}'s; this
 * class keeps the lock's key, its reads (the entry just ahead, the token floor) and the watch.
 *
 * <p>Concurrency: every mutable field, here and in {@link QueuedAttempt}, is guarded by {@code this};
 * lock-api never runs two calls of one attempt at once, but watch events and session losses arrive on
 * other threads.
 */
final class EtcdAttempt extends QueuedAttempt<EtcdAttempt.Entry> {

    private static final Logger log = LoggerFactory.getLogger(EtcdAttempt.class);
    /** A kept grant's poll sends a keep-alive once the session's last is older than the TTL divided by this. */
    static final int CONFIRM_KEPT_AFTER = 6;

    private final String floorKey;
    private final ByteString floorBytes;
    /**
     * For a grant the client may keep ({@code warden.lock.lease-cache}): the age of the session's last
     * confirmation beyond which a poll sends a keep-alive with it ({@link #confirming}); 0 for any other.
     */
    private final long confirmAfterNanos;

    private String ahead;
    private long aheadRevision;
    private long readRevision;
    private Calls.Watching watcher;
    private CompletableFuture<Void> waiting;
    private ScheduledFuture<?> fallback;

    EtcdAttempt(EtcdDriver driver, String prefix, String marker, String floor, String value, boolean kept) {
        super(driver, Kind.LOCK, prefix, marker, Requests.bytes(value), log);
        this.floorKey = floor;
        this.floorBytes = Requests.bytes(floor);
        this.confirmAfterNanos = kept ? driver.config().ttl().toNanos() / CONFIRM_KEPT_AFTER : 0;
    }

    /**
     * A grant the client may keep is kept only while fresh: less than a third of the TTL since the lease was
     * last confirmed. Counted from the session's last keep-alive (every third of the TTL) it would often be
     * nearly stale at once, so such a poll sends a keep-alive with it once the last is older than a sixth of
     * the TTL: its grant stays fresh at least a sixth of the TTL, at no more than six keep-alives per TTL.
     */
    @Override
    CompletableFuture<Void> confirming(Session s) {
        if (confirmAfterNanos == 0 || System.nanoTime() - s.confirmedSentAt() < confirmAfterNanos) {
            return CONFIRMED;
        }
        return s.keepAliveOnce().handle((v, error) -> {
            if (error != null) {
                log.debug("a keep-alive sent with a poll of {} failed; its grant counts from the last one", prefix, error);
            }
            return null;
        });
    }

    /** The queue entry of {@code session} under {@code prefix}. */
    static String entryKey(String prefix, Session session) {
        return prefix + Long.toHexString(session.leaseId());
    }

    @Override
    String keyOn(Session s) {
        return entryKey(prefix, s);
    }

    /** Creates the entry and reads the two newest entries, ours and the one just ahead, and the floor. */
    @Override
    TxnRequest createRequest(ByteString kb, Session s) {
        return Requests.create(markerBytes, kb, valueBytes, s.leaseId(), prefixBytes, prefixEnd, floorBytes);
    }

    @Override
    long createdRevision(TxnResponse r, ByteString kb) {
        long mine = 0;
        for (KeyValue kvp : r.getResponses(1).getResponseRange().getKvsList()) {
            if (kvp.getKey().equals(kb)) {
                mine = kvp.getCreateRevision();
            }
        }
        return mine;
    }

    /** Reads our entry, the newest entry created before it and the floor. */
    @Override
    TxnRequest recheckRequest(ByteString kb, long mine) {
        return Requests.recheck(kb, mine, prefixBytes, prefixEnd, floorBytes);
    }

    @Override
    CompletableFuture<Entry> ahead(TxnResponse r, long mine, boolean creation) {
        return CompletableFuture.completedFuture(entry(r.getResponses(1).getResponseRange().getKvsList(), mine,
                r.getHeader().getRevision(), Requests.floor(r.getResponses(2).getResponseRange())));
    }

    /** Granted when nothing is ahead; the grant carries the floor read with the queue. */
    @Override
    Granting noted(Entry entry) {
        readRevision = entry.revision();
        ahead = entry.ahead();
        aheadRevision = entry.aheadRevision();
        if (entry.ahead() != null) {
            return null;
        }
        return (k, rev, s, confirmed) -> new EtcdGrant(k, rev, floorKey, entry.floor(), s, confirmed);
    }

    /** The newest of {@code kvs} created before {@code mine}, if any. */
    private static Entry entry(List<KeyValue> kvs, long mine, long revision, long floor) {
        KeyValue best = null;
        for (KeyValue kvp : kvs) {
            long rev = kvp.getCreateRevision();
            if (rev < mine && (best == null || rev > best.getCreateRevision())) {
                best = kvp;
            }
        }
        return best == null ? new Entry(null, 0, revision, floor)
                : new Entry(best.getKey().toStringUtf8(), best.getCreateRevision(), revision, floor);
    }

    /**
     * Watches the entry ahead from the revision after our read, so nothing between the read and
     * the watch is missed. If the server registered the watch after other writes, it may serve it
     * from its slower catch-up path; then one extra read checks the entry ahead at once. A lost
     * session fails the wait; a watch error or a quiet TTL makes it poll again.
     */
    @Override
    public CompletionStage<Void> changed() {
        CompletableFuture<Void> w = new CompletableFuture<>();
        String watched;
        long watchedRevision;
        long from;
        Session s;
        synchronized (this) {
            waiting = w;
            watched = ahead;
            watchedRevision = aheadRevision;
            from = readRevision + 1;
            s = session();
        }
        if (watched == null) {
            w.complete(null);
            return w;
        }
        s.failOnLoss(w, cause -> entryLost("its etcd lease was lost: " + cause.getMessage()));
        WatchRequest create = WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                .setKey(Requests.bytes(watched)).setStartRevision(from)).build();
        Calls.Watching started;
        try {
            started = driver.calls().watch("a watch of " + watched, create, response -> {
                if (response.getCanceled()) {
                    log.debug("watch of {} cancelled by etcd ({}); polling again", watched, response.getCancelReason());
                    w.complete(null);
                } else if (response.getCreated()) {
                    if (response.getHeader().getRevision() > from - 1) {
                        checkAhead(watched, watchedRevision, w);
                    }
                } else if (response.getEventsCount() > 0) {
                    w.complete(null);
                }
            }, error -> {
                log.debug("watch of {} ended; polling again", watched, error);
                driver.calls().schedule(() -> w.complete(null), TimeUnit.MILLISECONDS.toNanos(100));
            });
        } catch (RuntimeException e) {
            w.completeExceptionally(driver.calls().translate("a watch of " + watched, e));
            return w;
        }
        // A watch on a member that froze says nothing: poll again at least once per TTL.
        ScheduledFuture<?> quiet = driver.calls().schedule(() -> w.complete(null), driver.config().ttl().toNanos());
        synchronized (this) {
            watcher = started;
            fallback = quiet;
        }
        w.whenComplete((v, error) -> stopWatching(started, quiet));
        return w;
    }

    /**
     * Reads the entry ahead; completes {@code w} when it is gone or is another generation (its
     * client released and queued again behind us).
     */
    private void checkAhead(String watched, long watchedRevision, CompletableFuture<Void> w) {
        driver.calls().unary("a read of " + watched, KVGrpc.getRangeMethod(), Requests.keyOnly(Requests.bytes(watched)))
                .whenComplete((r, error) -> {
                    if (error != null || r.getKvsCount() == 0 || r.getKvs(0).getCreateRevision() != watchedRevision) {
                        w.complete(null);
                    }
                });
    }

    private void stopWatching(Calls.Watching started, ScheduledFuture<?> quiet) {
        if (quiet != null) {
            quiet.cancel(false);
        }
        try {
            started.cancel();
        } catch (RuntimeException e) {
            log.debug("closing a watch failed", e);
        }
    }

    @Override
    Stopping stopping() {
        Calls.Watching wt = watcher;
        ScheduledFuture<?> fb = fallback;
        CompletableFuture<Void> w = waiting;
        watcher = null;
        fallback = null;
        return () -> {
            if (wt != null) {
                stopWatching(wt, fb);
            }
            if (w != null) {
                w.complete(null);
            }
        };
    }

    record Entry(String ahead, long aheadRevision, long revision, long floor) {
    }
}
