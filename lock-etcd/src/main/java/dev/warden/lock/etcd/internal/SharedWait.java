package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Share;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One wait of a shared attempt for the entries ahead of it to shrink enough: a watch of the name's
 * prefix for deletions only ({@code NOPUT}), from the revision after the read that found them (a watch
 * from a revision replays the history since, so nothing between the read and the watch is missed, and
 * nothing older is replayed). Entries are only ever created behind existing ones, so the weight ahead
 * can only fall: each deletion of an entry read ahead is subtracted, and the wait completes once what is
 * left fits. When the read stopped at the first entry that did not fit, the entries beyond it are
 * unknown but behind it: the wait completes when the known ones fit, and the poll reads on. So a release
 * wakes only the waiters it lets in, not every waiter of the name.
 *
 * <p>As the lock's wait: when the server registered the watch after later writes (it then serves it
 * from a slower catch-up path), one read of the entries ahead checks at once; the deletion of this
 * attempt's own entry, a cancelled watch, or a TTL without news completes it (the poll then tells);
 * a watch that fails is retried by polling after a pause; a lost session fails it, and so does the
 * driver's close ({@link SharedLocks#register}).
 *
 * <p>Concurrency: {@code ahead} and {@code weight} are guarded by {@code this}; watch answers and reads
 * arrive on the I/O thread, timers on the driver's; {@code done} is thread-safe.
 */
final class SharedWait {

    private static final Logger log = LoggerFactory.getLogger(SharedWait.class);

    private final Calls calls;
    private final Share share;
    private final ByteString ownKey;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** The entries read ahead that have not gone yet, and their weight. Guarded by {@code this}. */
    private final Map<ByteString, SharedQueue.Entry> ahead;
    private long weight;

    SharedWait(Calls calls, Share share, ByteString ownKey, SharedQueue.Ahead read) {
        this.calls = calls;
        this.share = share;
        this.ownKey = ownKey;
        this.ahead = new HashMap<>(read.entries());
        this.weight = read.weight();
    }

    /** Completes as the class says, or fails with what {@code lost} makes of the session's loss. */
    CompletableFuture<Void> start(SharedLocks locks, Session session, String prefix, ByteString prefixBytes, ByteString prefixEnd,
                                  long from, long ttlNanos, Function<Throwable, Throwable> lost) {
        locks.register(done);
        session.failOnLoss(done, lost);
        if (done.isDone()) {
            return done;
        }
        WatchRequest create = WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                .setKey(prefixBytes).setRangeEnd(prefixEnd).setStartRevision(from)
                .addFilters(WatchCreateRequest.FilterType.NOPUT)).build();
        Calls.Watching watching;
        try {
            watching = calls.watch("a watch of shared queue " + prefix, create,
                    response -> answered(response, prefix, prefixBytes, prefixEnd, from), error -> ended(locks, prefix, error));
        } catch (RuntimeException e) {
            done.completeExceptionally(calls.translate("a watch of shared queue " + prefix, e));
            return done;
        }
        // A watch on a member that froze says nothing: poll again at least once per TTL.
        ScheduledFuture<?> quiet = calls.schedule(() -> done.complete(null), ttlNanos);
        done.whenComplete((v, error) -> stop(watching, quiet));
        return done;
    }

    /** Ends the wait normally (the attempt is abandoned), stopping the watch. */
    void cancel() {
        done.complete(null);
    }

    private void answered(WatchResponse response, String prefix, ByteString prefixBytes, ByteString prefixEnd, long from) {
        if (response.getCanceled()) {
            log.debug("watch of {} cancelled by etcd ({}); polling again", prefix, response.getCancelReason());
            done.complete(null);
        } else if (response.getCreated()) {
            if (response.getHeader().getRevision() > from - 1) {
                check(prefix, prefixBytes, prefixEnd);
            }
        } else {
            for (Event event : response.getEventsList()) {
                if (event.getType() == Event.EventType.DELETE) {
                    gone(event.getKv().getKey());
                }
            }
        }
    }

    /** An entry was deleted: ours (the poll tells why), or one ahead, which may let us in. */
    private void gone(ByteString key) {
        if (key.equals(ownKey)) {
            done.complete(null);
            return;
        }
        boolean fits;
        synchronized (this) {
            SharedQueue.Entry entry = ahead.remove(key);
            if (entry == null) {
                return;
            }
            weight -= entry.weight();
            fits = share.fitsBehind(weight);
        }
        if (fits) {
            done.complete(null);
        }
    }

    /** Reads which of the entries ahead are still there; completes when the rest fit. */
    private void check(String prefix, ByteString prefixBytes, ByteString prefixEnd) {
        long min;
        long max;
        synchronized (this) {
            if (ahead.isEmpty()) {
                return;
            }
            min = ahead.values().stream().mapToLong(SharedQueue.Entry::createRevision).min().orElseThrow();
            max = ahead.values().stream().mapToLong(SharedQueue.Entry::createRevision).max().orElseThrow();
        }
        calls.unary("a read of shared queue " + prefix, KVGrpc.getRangeMethod(), SharedQueue.present(prefixBytes, prefixEnd, min, max))
                .whenComplete((r, error) -> {
                    if (error != null) {
                        done.complete(null);
                        return;
                    }
                    Set<ByteString> there = new HashSet<>();
                    for (KeyValue kv : r.getKvsList()) {
                        SharedQueue.Entry entry;
                        synchronized (this) {
                            entry = ahead.get(kv.getKey());
                        }
                        if (entry != null && entry.createRevision() == kv.getCreateRevision()) {
                            there.add(kv.getKey());
                        }
                    }
                    Set<ByteString> read;
                    synchronized (this) {
                        read = new HashSet<>(ahead.keySet());
                    }
                    read.removeAll(there);
                    read.forEach(this::gone);
                });
    }

    private void ended(SharedLocks locks, String prefix, Throwable error) {
        if (locks.closed()) {
            done.completeExceptionally(SharedLocks.closedException());
            return;
        }
        log.debug("watch of {} ended; polling again", prefix, error);
        if (calls.schedule(() -> done.complete(null), TimeUnit.MILLISECONDS.toNanos(100)) == null) {
            done.complete(null);
        }
    }

    private static void stop(Calls.Watching watching, ScheduledFuture<?> quiet) {
        if (quiet != null) {
            quiet.cancel(false);
        }
        try {
            watching.cancel();
        } catch (RuntimeException e) {
            log.debug("closing a watch failed", e);
        }
    }
}
