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
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One place in a lock's queue. The first poll creates the entry {@code <prefix><unique>} with the
 * session's lease and, in the same transaction, reads the two newest entries: ours and the one just
 * ahead of it. Later polls read our entry and the newest entry created before it. No entry ahead
 * means we hold the lock; its TTL counts from the session's last confirmed keep-alive (the session
 * keeps the lease alive, so a poll sends no keep-alive of its own).
 * Otherwise {@link #changed()} watches the entry ahead from the revision after our read, so its
 * deletion cannot be missed, and completes when it goes.
 *
 * <p>Creation is guarded by a marker key: an entry whose creation was never confirmed (the call
 * timed out) is abandoned by deleting it and writing the marker in one transaction, so a creation
 * that reaches the server late finds the marker and does nothing, instead of leaving an entry on a
 * live lease that would block the lock.
 */
final class EtcdAttempt implements LockAttempt {

    private static final Logger log = LoggerFactory.getLogger(EtcdAttempt.class);

    private enum Created { NO, UNKNOWN, YES }

    private final EtcdDriver driver;
    private final String prefix;
    private final String key;
    private final ByteString keyBytes;
    private final ByteString prefixBytes;
    private final ByteString prefixEnd;
    private final ByteString markerBytes;
    private final ByteString ownerBytes;

    private Session session;
    private Created created = Created.NO;
    private long createRevision;
    private String ahead;
    private long readRevision;
    private boolean finished;
    private Calls.Watching watcher;
    private CompletableFuture<Void> waiting;
    private ScheduledFuture<?> fallback;

    EtcdAttempt(EtcdDriver driver, String prefix, String marker, String unique, String owner) {
        this.driver = driver;
        this.prefix = prefix;
        this.key = prefix + unique;
        this.keyBytes = Requests.bytes(key);
        this.prefixBytes = Requests.bytes(prefix);
        this.prefixEnd = Requests.prefixEnd(prefixBytes);
        this.markerBytes = Requests.bytes(marker);
        this.ownerBytes = Requests.bytes(owner);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        synchronized (this) {
            if (created == Created.NO) {
                return driver.session().thenCompose(s -> create(s, true));
            }
        }
        return recheck();
    }

    /**
     * One transaction: create our entry on the session's lease (unless the marker says the attempt
     * was abandoned) and read the two newest entries, ours and the one just ahead. A lease the server
     * no longer knows fails the whole transaction before it writes anything: the session is then
     * lost, and the entry is created once more on a new one.
     */
    private CompletableFuture<Optional<Grant>> create(Session s, boolean mayRenewSession) {
        synchronized (this) {
            session = s;
            created = Created.UNKNOWN;
        }
        CompletableFuture<TxnResponse> txn = driver.calls().unary("queueing for " + prefix, KVGrpc.getTxnMethod(),
                Requests.create(markerBytes, keyBytes, ownerBytes, s.leaseId(), prefixBytes, prefixEnd));
        CompletableFuture<Entry> read = txn.thenApply(r -> {
            if (!r.getSucceeded()) {
                throw new LockException(LockException.Reason.UNAVAILABLE, "queue entry " + key + " was abandoned before it was created");
            }
            List<KeyValue> kvs = r.getResponses(1).getResponseRange().getKvsList();
            long mine = 0;
            for (KeyValue kvp : kvs) {
                if (kvp.getKey().equals(keyBytes)) {
                    mine = kvp.getCreateRevision();
                }
            }
            if (mine == 0) {
                throw new LockException(LockException.Reason.PROTOCOL, "etcd did not return queue entry " + key
                        + " in the transaction that created it");
            }
            synchronized (this) {
                created = Created.YES;
                createRevision = mine;
            }
            return new Entry(aheadOf(kvs, mine), r.getHeader().getRevision());
        });
        CompletableFuture<Optional<Grant>> decided = decide(s, read);
        if (!mayRenewSession) {
            return decided;
        }
        return decided.handle((grant, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(grant);
            }
            if (!Calls.leaseNotFound(error)) {
                return CompletableFuture.<Optional<Grant>>failedFuture(error);
            }
            synchronized (this) {
                // The server refused the whole transaction: nothing was created.
                created = Created.NO;
            }
            s.lose(new LockException(LockException.Reason.UNAVAILABLE, "etcd lease " + Long.toHexString(s.leaseId())
                    + " is gone (expired or revoked on the server)", Calls.unwrap(error)));
            return driver.session().thenCompose(next -> create(next, false));
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Optional<Grant>> recheck() {
        Session s;
        long mine;
        synchronized (this) {
            s = session;
            mine = createRevision;
        }
        if (!s.isAlive()) {
            return CompletableFuture.failedFuture(entryLost("its etcd lease was lost"));
        }
        CompletableFuture<TxnResponse> txn = driver.calls().unary("a queue read of " + prefix, KVGrpc.getTxnMethod(),
                Requests.recheck(keyBytes, mine, prefixBytes, prefixEnd));
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
                    new Entry(aheadOf(r.getResponses(1).getResponseRange().getKvsList(), mine), r.getHeader().getRevision()));
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
            synchronized (this) {
                readRevision = entry.revision();
                ahead = entry.ahead();
                if (entry.ahead() != null) {
                    return Optional.<Grant>empty();
                }
                rev = createRevision;
            }
            long confirmed = s.confirmedSentAt();
            if (!s.isAlive()) {
                throw entryLost("its etcd lease was lost");
            }
            synchronized (this) {
                finished = true;
            }
            return Optional.<Grant>of(new EtcdGrant(key, rev, s, confirmed));
        });
    }

    private String aheadOf(List<KeyValue> kvs, long mine) {
        KeyValue best = null;
        for (KeyValue kvp : kvs) {
            long rev = kvp.getCreateRevision();
            if (rev < mine && (best == null || rev > best.getCreateRevision())) {
                best = kvp;
            }
        }
        return best == null ? null : best.getKey().toStringUtf8();
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
        long from;
        Session s;
        synchronized (this) {
            waiting = w;
            watched = ahead;
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
                        checkAhead(watched, w);
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

    /** Reads whether the entry ahead still exists; completes {@code w} when it does not. */
    private void checkAhead(String watched, CompletableFuture<Void> w) {
        driver.calls().unary("a read of " + watched, KVGrpc.getRangeMethod(), Requests.count(Requests.bytes(watched)))
                .whenComplete((r, error) -> {
                    if (error != null || r.getCount() == 0) {
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
        Calls.Watching wt;
        ScheduledFuture<?> fb;
        CompletableFuture<Void> w;
        synchronized (this) {
            finished = true;
            state = created;
            rev = createRevision;
            s = session;
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
                return cleanUp("abandoning " + key, () -> driver.guardedDelete(key, rev), s);
            default:
                return cleanUp("abandoning unconfirmed " + key, () -> deleteAndMark(s), s);
        }
    }

    /** Deletes the entry and writes the marker that stops its creation if it is still on its way. */
    private CompletableFuture<TxnResponse> deleteAndMark(Session s) {
        return driver.calls().unary("abandoning " + key, KVGrpc.getTxnMethod(),
                Requests.deleteAndMark(keyBytes, markerBytes, s.leaseId()));
    }

    private CompletableFuture<Void> cleanUp(String what, java.util.function.Supplier<CompletableFuture<?>> op, Session s) {
        CompletableFuture<Void> done = op.get().handle((r, error) -> {
            if (error != null && !Calls.leaseNotFound(error)) {
                driver.retryInBackground(what, op, s);
                throw error instanceof CompletionException ce ? ce : new CompletionException(error);
            }
            return null;
        });
        return done;
    }

    private record Entry(String ahead, long revision) {
    }
}
