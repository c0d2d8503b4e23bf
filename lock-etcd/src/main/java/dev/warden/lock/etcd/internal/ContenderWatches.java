package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.RangeRequest;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * The watch on a kept lock's contenders ({@code warden.lock.lease-cache}): one watch stream of the lock's
 * queue prefix, from the revision after the grant's entry was created.
 * Every entry created behind the holder is a contender: a put event of version 1 (its create revision is its
 * mod revision) whose key is not the holder's own; a re-put or another entry's deletion is not one. The
 * holder's own key deleted (the cache closes the watch before it deletes, so behind its back: an eviction, a
 * lost lease) is reported too: another client may hold the lock already. As the watch starts from
 * the grant, the entries queued between the grant and the watch are replayed; when other writes came meanwhile
 * etcd replays them on its slower catch-up path (a pass every 100 ms), so the watch's confirmation then reads
 * once which entries were created since the grant, and the stage completes only after that read: once it has,
 * every contender until the watch was in place was reported. A kept hold thus costs the watch's stream, at most
 * that one read, and the stream's cancel when the hold ends.
 *
 * <p>Conservative where the watch can no longer tell: a start revision already compacted (etcd cancels the
 * watch), a cancel by etcd, a stream that ended or the grant's session lost, once the watch was in place, are
 * each reported as a contender, so the hold is released rather than kept blind. Before it was in place they
 * fail the stage instead, as does no confirmation within the request timeout; a failed stage leaves nothing
 * open.
 *
 * <p>Concurrency: {@code watching}, {@code timer} and {@code closed} are guarded by {@code this}; the stage and
 * the session registration are thread-safe. Answers arrive on the driver's I/O thread, the timeout on its
 * timer, a session loss and {@link #close()} on any thread; {@code asked} runs on the thread that learnt of
 * the contender, never holding {@code this}. A contender reported as the watch closes may still run
 * {@code asked} once after {@link #close()}: conservative, as it only releases a hold.
 */
final class ContenderWatches implements ContenderWatch {

    private static final Logger log = LoggerFactory.getLogger(ContenderWatches.class);

    private final Calls calls;
    private final EtcdDriver driver;
    private final String what;
    private final ByteString prefixBytes;
    private final ByteString prefixEnd;
    private final ByteString ownKey;
    /** The first revision watched: the one after the grant's entry was created. */
    private final long from;
    private final Runnable asked;
    /** Completes with this watch once in place, or fails; never both. */
    private final CompletableFuture<ContenderWatch> started = new CompletableFuture<>();
    /** Completes when the watch ends; fails when the grant's session is lost first. */
    private final CompletableFuture<Void> session = new CompletableFuture<>();

    private Calls.Watching watching;
    private ScheduledFuture<?> timer;
    private boolean closed;

    private ContenderWatches(EtcdDriver driver, String name, String prefix, EtcdGrant grant, Runnable asked) {
        this.driver = driver;
        this.calls = driver.calls();
        this.what = "the contender watch of lock '" + name + "'";
        this.prefixBytes = Requests.bytes(prefix);
        this.prefixEnd = Requests.prefixEnd(prefixBytes);
        this.ownKey = Requests.bytes(grant.key());
        this.from = grant.createRevision() + 1;
        this.asked = asked;
    }

    /** Starts watching the contenders of {@code grant}, a hold of lock {@code name} of {@code driver}'s namespace. */
    static CompletableFuture<ContenderWatch> start(EtcdDriver driver, String name, Grant grant, Runnable asked) {
        if (!(grant instanceof EtcdGrant g)) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL, "contenders are watched"
                    + " for locks only, not for a share of the shared name '" + name + "' (" + grant.getClass().getSimpleName() + ")"));
        }
        String prefix = Keys.queuePrefix(driver.config().namespace(), name);
        if (!g.key().startsWith(prefix) || g.key().indexOf('/', prefix.length()) >= 0) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL, "the grant of "
                    + g.key() + " is not a hold of lock '" + name + "' (queue " + prefix + ")"));
        }
        ContenderWatches w = new ContenderWatches(driver, name, prefix, g, asked);
        w.open(g.session());
        return w.started;
    }

    private void open(Session s) {
        WatchRequest create = WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                .setKey(prefixBytes).setRangeEnd(prefixEnd).setStartRevision(from)).build();
        long limit = driver.config().requestTimeout().toNanos();
        synchronized (this) {
            timer = calls.schedule(this::timedOut, limit);
        }
        started.whenComplete((w, error) -> cancelTimer());
        Calls.Watching w;
        try {
            w = calls.watch(what, create, this::answered, this::streamEnded);
        } catch (RuntimeException e) {
            failOrAsk(calls.translate(what, e));
            return;
        }
        boolean stopNow;
        synchronized (this) {
            stopNow = closed;
            if (!closed) {
                watching = w;
            }
        }
        if (stopNow) {
            stop(w);
            return;
        }
        s.failOnLoss(session, cause -> cause);
        session.whenComplete((v, lost) -> {
            if (lost != null) {
                failOrAsk(new LockException(LockException.Reason.UNAVAILABLE, what + " ended: the hold's etcd lease was lost", lost));
            }
        });
    }

    private void answered(WatchResponse response) {
        if (response.getCanceled()) {
            if (response.getCompactRevision() > 0) {
                // What happened since the grant is no longer known: taken as asked, not as an error.
                log.debug("{} started at revision {}, compacted up to {}: the hold is let go of", what, from,
                        response.getCompactRevision());
                ask();
                close();
                started.complete(this);
            } else {
                failOrAsk(new LockException(LockException.Reason.UNAVAILABLE, what + " was cancelled by etcd: "
                        + response.getCancelReason()));
            }
            return;
        }
        if (response.getCreated()) {
            confirmed(response.getHeader().getRevision());
        }
        for (Event event : response.getEventsList()) {
            if (contender(event.getType() == Event.EventType.PUT, event.getKv())
                    || (event.getType() == Event.EventType.DELETE && event.getKv().getKey().equals(ownKey))) {
                // One report per answer is enough: each says the same.
                ask();
                return;
            }
        }
    }

    /** A put that created an entry (version 1) other than the holder's own: a contender queued. */
    private boolean contender(boolean put, KeyValue kv) {
        return put && kv.getVersion() == 1 && kv.getCreateRevision() == kv.getModRevision() && !kv.getKey().equals(ownKey);
    }

    /**
     * The server confirmed the watch at {@code revision}. With nothing written since the grant the watch is in
     * place; else one read of the entries created since tells of those etcd is still to replay.
     */
    private void confirmed(long revision) {
        if (revision < from) {
            started.complete(this);
            return;
        }
        RangeRequest since = RangeRequest.newBuilder().setKey(prefixBytes).setRangeEnd(prefixEnd)
                .setMinCreateRevision(from).setKeysOnly(true).setLimit(2).build();
        calls.unary("a read of the contenders of " + what, KVGrpc.getRangeMethod(), since).whenComplete((r, error) -> {
            if (error != null) {
                // The watch replays them all the same, only later.
                log.debug("{}: reading the entries created since the grant failed", what, error);
            } else if (r.getKvsList().stream().anyMatch(kv -> !kv.getKey().equals(ownKey))) {
                ask();
            }
            started.complete(this);
        });
    }

    /** The stream ended without a cancel of ours: a failed connection, the channel closed. */
    private void streamEnded(Throwable error) {
        failOrAsk(error != null ? error : new LockException(LockException.Reason.UNAVAILABLE, what + " ended on the server"));
    }

    /** The watch can tell no more: before it was in place its stage fails, after it its hold is reported asked. */
    private void failOrAsk(Throwable why) {
        if (!started.completeExceptionally(why)) {
            log.debug("{} ended; the hold is let go of", what, why);
            ask();
        }
        close();
    }

    private void timedOut() {
        if (started.completeExceptionally(new LockException(LockException.Reason.UNAVAILABLE, "etcd did not confirm "
                + what + " within " + driver.config().requestTimeout().toMillis() + " ms"))) {
            close();
        }
    }

    private void ask() {
        synchronized (this) {
            if (closed) {
                return;
            }
        }
        if (driver.isClosed()) {
            return;
        }
        try {
            asked.run();
        } catch (RuntimeException e) {
            // Never into gRPC's listener: the client's own bookkeeping failed.
            log.warn("{}: telling the client of a contender failed", what, e);
        }
    }

    private void cancelTimer() {
        ScheduledFuture<?> t;
        synchronized (this) {
            t = timer;
            timer = null;
        }
        if (t != null) {
            t.cancel(false);
        }
    }

    /** Cancels the watch (idempotent). */
    @Override
    public void close() {
        Calls.Watching w;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            w = watching;
            watching = null;
        }
        cancelTimer();
        session.complete(null);
        stop(w);
    }

    private static void stop(Calls.Watching w) {
        if (w == null) {
            return;
        }
        try {
            w.cancel();
        } catch (RuntimeException e) {
            log.debug("closing a watch failed", e);
        }
    }
}
