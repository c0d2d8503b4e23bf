package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import io.etcd.jetcd.api.Event;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.KeyValue;
import io.etcd.jetcd.api.WatchCreateRequest;
import io.etcd.jetcd.api.WatchRequest;
import io.etcd.jetcd.api.WatchResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * The one watch of a shared name's deletions in this driver, which every {@link SharedWait} of the
 * driver on that name joins: a watch of the name's prefix for deletions only ({@code NOPUT}), each
 * deletion handed to every wait. A watch per wait cost a stream opened and reset per wait, a read on
 * most of them, and etcd sent each deletion once per waiter of the client; the name's one watch costs
 * one stream while anyone waits.
 *
 * <p>The watch starts at the server's current revision, which etcd names in its answer: a watch from an
 * older revision (a wait's read) is registered behind later writes whenever the name is busy, and etcd
 * then catches it up on its slower path, a pass every 100 ms, which delayed most waits by up to that.
 * A wait misses nothing from its read on: deletions the watch handed on before the wait joined are
 * kept (the last {@value #RECENT}) and handed to it; when the wait's read is older than the watch's
 * start, or than the deletions kept, one read of the entries ahead and of its own tells which went.
 *
 * <p>The watch stops when its last wait leaves (a granted or abandoned attempt watches nothing), or when
 * it ends: a cancel by etcd (a compaction, a refused token) completes every wait at once (each poll then
 * reads and joins a new watch), a failed stream after a pause, a watch that told nothing while a wait
 * waited a whole TTL (its member may have frozen) likewise, and the driver's close fails them
 * ({@link SharedLocks#register}). An ended watch takes no wait: {@link SharedLocks#join} makes a new one.
 *
 * <p>Concurrency: {@code waits}, {@code recent}, {@code opened}, {@code recentFrom}, {@code watching},
 * {@code ended} and {@code heardAt} are guarded by {@code this}; answers arrive on the I/O thread, joins
 * and leaves on any. Waits are told of deletions holding {@code this} (then their own monitor), and
 * completed after letting go of it, since completing one runs the acquire loop's next step.
 */
final class SharedWatch {

    private static final Logger log = LoggerFactory.getLogger(SharedWatch.class);

    /** Deletions kept for waits that join after the watch passed their read. */
    static final int RECENT = 1024;

    private record Deletion(ByteString key, long revision) {
    }

    private final SharedLocks locks;
    private final Calls calls;
    private final String prefix;
    private final ByteString prefixBytes;
    private final ByteString prefixEnd;

    private final Set<SharedWait> waits = new HashSet<>();
    /** The last deletions the watch handed on, oldest first. */
    private final ArrayDeque<Deletion> recent = new ArrayDeque<>();
    private boolean opened;
    /** {@link #recent} holds every deletion from this revision on; 0 until etcd confirmed the watch. */
    private long recentFrom;
    private Calls.Watching watching;
    private boolean ended;
    /** When the watch was started or last answered, on {@link System#nanoTime()}. */
    private long heardAt;

    SharedWatch(SharedLocks locks, Calls calls, String prefix) {
        this.locks = locks;
        this.calls = calls;
        this.prefix = prefix;
        this.prefixBytes = Requests.bytes(prefix);
        this.prefixEnd = Requests.prefixEnd(prefixBytes);
    }

    /** Adds {@code w}, starting the watch for the first; false when the watch has ended. */
    boolean join(SharedWait w) {
        boolean open = false;
        boolean wake = false;
        boolean check = false;
        synchronized (this) {
            if (ended) {
                return false;
            }
            waits.add(w);
            if (!opened) {
                opened = true;
                heardAt = System.nanoTime();
                open = true;
            } else if (recentFrom == 0) {
                // Not confirmed yet: the confirmation reads for it if its read is older than the watch.
                return true;
            } else if (w.from() >= recentFrom) {
                // The newest first: only those from the wait's read on count.
                for (Iterator<Deletion> it = recent.descendingIterator(); it.hasNext(); ) {
                    Deletion d = it.next();
                    if (d.revision() < w.from()) {
                        break;
                    }
                    wake |= w.deleted(d.key(), d.revision());
                }
            } else {
                check = true;
            }
        }
        if (open) {
            open();
        } else if (wake) {
            w.wake();
        } else if (check) {
            check(List.of(w));
        }
        return true;
    }

    /** Removes {@code w}; the watch stops with its last wait. */
    void leave(SharedWait w) {
        Calls.Watching stop;
        synchronized (this) {
            if (!waits.remove(w) || !waits.isEmpty() || ended) {
                return;
            }
            ended = true;
            stop = watching;
            watching = null;
        }
        locks.forget(prefix, this);
        stop(stop);
    }

    /**
     * A wait heard nothing for {@code ttlNanos}: when the watch too told nothing for as long, it may be
     * stuck (its member froze), so it ends, and its waits poll and join a new one.
     */
    void quiet(long ttlNanos) {
        synchronized (this) {
            if (ended || System.nanoTime() - heardAt < ttlNanos) {
                return;
            }
        }
        log.debug("watch of {} told nothing for a TTL; starting afresh", prefix);
        end().forEach(SharedWait::wake);
    }

    private void open() {
        WatchRequest create = WatchRequest.newBuilder().setCreateRequest(WatchCreateRequest.newBuilder()
                .setKey(prefixBytes).setRangeEnd(prefixEnd).addFilters(WatchCreateRequest.FilterType.NOPUT)).build();
        Calls.Watching started;
        try {
            started = calls.watch("a watch of shared queue " + prefix, create, this::answered, this::failed);
        } catch (RuntimeException e) {
            Throwable error = calls.translate("a watch of shared queue " + prefix, e);
            end().forEach(w -> w.fail(error));
            return;
        }
        boolean stopNow;
        synchronized (this) {
            stopNow = ended;
            if (!ended) {
                watching = started;
            }
        }
        if (stopNow) {
            stop(started);
        }
    }

    private void answered(WatchResponse response) {
        List<SharedWait> told = new ArrayList<>();
        synchronized (this) {
            if (ended) {
                return;
            }
            heardAt = System.nanoTime();
            if (response.getCanceled()) {
                log.debug("watch of {} cancelled by etcd ({}); polling again", prefix, response.getCancelReason());
            } else if (response.getCreated()) {
                // The watch tells every deletion after the revision its answer names.
                recentFrom = response.getHeader().getRevision() + 1;
                for (SharedWait w : waits) {
                    if (w.from() < recentFrom) {
                        told.add(w);
                    }
                }
            } else {
                deleted(response, told);
            }
        }
        if (response.getCanceled()) {
            end().forEach(SharedWait::wake);
        } else if (response.getCreated()) {
            if (!told.isEmpty()) {
                check(told);
            }
        } else {
            told.forEach(SharedWait::wake);
        }
    }

    /** Holding {@code this}: keeps each deletion of {@code response} and tells every wait; adds those it lets in. */
    private void deleted(WatchResponse response, List<SharedWait> wake) {
        for (Event event : response.getEventsList()) {
            if (event.getType() != Event.EventType.DELETE) {
                continue;
            }
            // A delete event's key-value holds the key and the deletion's revision.
            Deletion d = new Deletion(event.getKv().getKey(), event.getKv().getModRevision());
            recent.addLast(d);
            if (recent.size() > RECENT) {
                recentFrom = recent.removeFirst().revision() + 1;
            }
            for (SharedWait w : waits) {
                if (w.deleted(d.key(), d.revision())) {
                    wake.add(w);
                }
            }
        }
    }

    private void failed(Throwable error) {
        List<SharedWait> all = end();
        if (locks.closed()) {
            all.forEach(w -> w.fail(SharedLocks.closedException()));
            return;
        }
        log.debug("watch of {} ended; polling again", prefix, error);
        if (calls.schedule(() -> all.forEach(SharedWait::wake), TimeUnit.MILLISECONDS.toNanos(100)) == null) {
            all.forEach(SharedWait::wake);
        }
    }

    /** Ends the watch and takes its waits off it; the caller completes them. */
    private List<SharedWait> end() {
        List<SharedWait> all;
        Calls.Watching stop;
        synchronized (this) {
            ended = true;
            all = new ArrayList<>(waits);
            waits.clear();
            stop = watching;
            watching = null;
        }
        locks.forget(prefix, this);
        stop(stop);
        return all;
    }

    /**
     * One read of which of the entries that the waits {@code ws} read ahead, and of their own, are
     * still there, sent after each joined and the watch was confirmed, so it covers what the watch does
     * not tell them (everything up to a revision no earlier than the watch's start); a wait whose
     * entries gone let it in, or whose own entry went, completes. A failed read completes them all:
     * each poll then reads for itself.
     */
    private void check(List<SharedWait> ws) {
        long min = Long.MAX_VALUE;
        long max = 0;
        for (SharedWait w : ws) {
            min = Math.min(min, w.minAhead());
            max = Math.max(max, w.mine());
        }
        calls.unary("a read of shared queue " + prefix, KVGrpc.getRangeMethod(), SharedQueue.present(prefixBytes, prefixEnd, min, max))
                .whenComplete((r, error) -> {
                    if (error != null) {
                        ws.forEach(SharedWait::wake);
                        return;
                    }
                    Map<ByteString, Long> present = new HashMap<>();
                    for (KeyValue kv : r.getKvsList()) {
                        present.put(kv.getKey(), kv.getCreateRevision());
                    }
                    for (SharedWait w : ws) {
                        if (w.present(present)) {
                            w.wake();
                        }
                    }
                });
    }

    private void stop(Calls.Watching w) {
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
