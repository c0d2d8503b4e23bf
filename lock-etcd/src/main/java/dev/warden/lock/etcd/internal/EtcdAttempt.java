package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.TxnResponse;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
 * keep-alive of its own). Otherwise {@link #changed()} watches the entry ahead from the revision
 * after our read, so its deletion cannot be missed, and completes when it goes.
 *
 * <p>Creation is guarded by a marker key unique to the attempt: an entry whose creation was never
 * confirmed (the call timed out) is abandoned by writing the marker and deleting the entry if it
 * holds this attempt's value, in one transaction, so a creation that reaches the server late finds
 * the marker and does nothing, and a later attempt's entry is never deleted.
 *
 * <p>Concurrency: every mutable field is guarded by {@code this}; lock-api never runs two calls of one
 * attempt at once, but watch events and session losses arrive on other threads.
 */
final class EtcdAttempt implements LockAttempt {

    private static final Logger log = LoggerFactory.getLogger(EtcdAttempt.class);
    /** Leftovers removed before giving up on creating the entry. */
    private static final int LEFTOVERS = 3;

    private enum Created { NO, UNKNOWN, YES }

    /** What a create does when the server no longer knows its session's lease. */
    private enum LeaseGone { NEW_SESSION_ONCE, FAIL }

    private final EtcdDriver driver;
    private final String prefix;
    private final ByteString prefixBytes;
    private final ByteString prefixEnd;
    private final ByteString markerBytes;
    /** The entry's value: the owner and this attempt's id. */
    private final ByteString valueBytes;
    private final String floorKey;
    private final ByteString floorBytes;

    private Session session;
    private String key;
    private ByteString keyBytes;
    private Created created = Created.NO;
    private long createRevision;
    private String ahead;
    private long aheadRevision;
    private long readRevision;
    private Calls.Watching watcher;
    private CompletableFuture<Void> waiting;
    private ScheduledFuture<?> fallback;

    EtcdAttempt(EtcdDriver driver, String prefix, String marker, String floor, String value) {
        this.driver = driver;
        this.floorKey = floor;
        this.floorBytes = Requests.bytes(floor);
        this.prefix = prefix;
        this.prefixBytes = Requests.bytes(prefix);
        this.prefixEnd = Requests.prefixEnd(prefixBytes);
        this.markerBytes = Requests.bytes(marker);
        this.valueBytes = Requests.bytes(value);
    }

    /** The queue entry of {@code session} under {@code prefix}. */
    static String entryKey(String prefix, Session session) {
        return prefix + Long.toHexString(session.leaseId());
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

    /**
     * One transaction: create our entry on the session's lease, unless the marker says the attempt
     * was abandoned or the entry exists, and read the two newest entries, ours and the one just
     * ahead. A lease the server no longer knows fails the whole transaction before it writes
     * anything: the session is then lost, and the entry is created once more on a new one.
     */
    private CompletableFuture<Optional<Grant>> create(Session s, LeaseGone leaseGone, int leftovers) {
        String k = entryKey(prefix, s);
        ByteString kb = Requests.bytes(k);
        synchronized (this) {
            session = s;
            key = k;
            keyBytes = kb;
            created = Created.UNKNOWN;
        }
        CompletableFuture<TxnResponse> txn = driver.calls().unary("queueing for " + prefix, KVGrpc.getTxnMethod(),
                Requests.create(markerBytes, kb, valueBytes, s.leaseId(), prefixBytes, prefixEnd, floorBytes));
        CompletableFuture<Optional<Grant>> decided = txn.thenCompose(r -> {
            if (r.getSucceeded()) {
                return decide(s, CompletableFuture.completedFuture(created(r, k, kb)));
            }
            synchronized (this) {
                // A compare failed: the transaction wrote nothing.
                created = Created.NO;
            }
            if (r.getResponses(1).getResponseRange().getKvsCount() > 0) {
                throw new LockException(LockException.Reason.UNAVAILABLE, "queue entry " + k
                        + " was abandoned before it was created");
            }
            if (leftovers == 0) {
                throw new LockException(LockException.Reason.UNAVAILABLE, "queue entry " + k
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

    /** The entry a successful creation made, and the one ahead of it. */
    private Entry created(TxnResponse r, String k, ByteString kb) {
        List<KeyValue> kvs = r.getResponses(1).getResponseRange().getKvsList();
        long mine = 0;
        for (KeyValue kvp : kvs) {
            if (kvp.getKey().equals(kb)) {
                mine = kvp.getCreateRevision();
            }
        }
        if (mine == 0) {
            throw new LockException(LockException.Reason.PROTOCOL, "etcd did not return queue entry " + k
                    + " in the transaction that created it");
        }
        synchronized (this) {
            created = Created.YES;
            createRevision = mine;
        }
        return entry(kvs, mine, r.getHeader().getRevision(), Requests.floor(r.getResponses(2).getResponseRange()));
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
        CompletableFuture<TxnResponse> txn = driver.calls().unary("a queue read of " + prefix, KVGrpc.getTxnMethod(),
                Requests.recheck(kb, mine, prefixBytes, prefixEnd, floorBytes));
        CompletableFuture<Entry> read = txn.thenCompose(r -> {
            RangeResponse own = r.getResponses(0).getResponseRange();
            if (own.getKvsCount() == 0 || own.getKvs(0).getCreateRevision() != mine) {
                // Most likely its lease ended: ask the server, so the session is lost (and the next
                // acquisition takes a new lease) before this one fails.
                return s.keepAliveOnce().handle((v, error) -> {
                    throw entryLost("its queue entry is gone (its lease expired, or it was deleted)");
                });
            }
            return CompletableFuture.completedFuture(
                    entry(r.getResponses(1).getResponseRange().getKvsList(), mine, r.getHeader().getRevision(),
                            Requests.floor(r.getResponses(2).getResponseRange())));
        });
        return decide(s, read);
    }

    /**
     * Granted when nothing is ahead and the session is alive. The read proved our entry, so our
     * lease, existed when it was served; the server keeps that lease for at least one TTL from the
     * send time of the session's last confirmed keep-alive, which the grant carries.
     */
    private CompletableFuture<Optional<Grant>> decide(Session s, CompletableFuture<Entry> read) {
        return read.thenApply(entry -> {
            long rev;
            String k;
            synchronized (this) {
                readRevision = entry.revision();
                ahead = entry.ahead();
                aheadRevision = entry.aheadRevision();
                if (entry.ahead() != null) {
                    return Optional.<Grant>empty();
                }
                rev = createRevision;
                k = key;
            }
            long confirmed = s.confirmedSentAt();
            if (!s.isAlive()) {
                throw entryLost("its etcd lease was lost");
            }
            return Optional.<Grant>of(new EtcdGrant(k, rev, floorKey, entry.floor(), s, confirmed));
        });
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

    private LockException entryLost(String why) {
        return new LockException(LockException.Reason.UNAVAILABLE, "waiting for lock queue " + prefix
                + " stopped: " + why);
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
            s = session;
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
    public CompletionStage<Void> abandon() {
        Created state;
        long rev;
        Session s;
        String k;
        ByteString kb;
        Calls.Watching wt;
        ScheduledFuture<?> fb;
        CompletableFuture<Void> w;
        synchronized (this) {
            state = created;
            rev = createRevision;
            s = session;
            k = key;
            kb = keyBytes;
            wt = watcher;
            fb = fallback;
            w = waiting;
            watcher = null;
            fallback = null;
        }
        if (wt != null) {
            stopWatching(wt, fb);
        }
        if (w != null) {
            w.complete(null);
        }
        switch (state) {
            case NO:
                return CompletableFuture.completedFuture(null);
            case YES:
                return driver.cleanUp("abandoning " + k, () -> driver.guardedDelete(k, rev), s);
            default:
                return driver.cleanUp("abandoning unconfirmed " + k, () -> deleteAndMark(k, kb, s), s);
        }
    }

    /**
     * Writes the marker that stops our creation if it is still on its way, and deletes the entry if
     * this attempt's (holds its value): never a later attempt's, even of the same acquisition.
     */
    private CompletableFuture<TxnResponse> deleteAndMark(String k, ByteString kb, Session s) {
        return driver.calls().unary("abandoning " + k, KVGrpc.getTxnMethod(),
                Requests.deleteIfOwnedAndMark(kb, valueBytes, markerBytes, s.leaseId()));
    }

    private record Entry(String ahead, long aheadRevision, long revision, long floor) {
    }
}
