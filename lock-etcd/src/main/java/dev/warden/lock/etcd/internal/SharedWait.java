package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.spi.Share;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Function;

/**
 * One wait of a shared attempt for the entries ahead of it to shrink enough, told of the name's
 * deletions by the name's one watch in this driver ({@link SharedWatch}), from the revision after the
 * read that found them: a deletion from before that read is of an entry the read no longer saw (or of
 * an earlier entry under a reused slot key), so it is ignored. Entries are only ever created behind
 * existing ones, so the weight ahead can only fall: each deletion of an entry read ahead is subtracted,
 * and the wait completes once what is left fits. The read knows every entry ahead unless the queue
 * ahead is longer than a page ({@link SharedQueue}); then the entries beyond are unknown but behind the
 * known ones: the wait completes when the known ones fit, and the poll reads on. So a release wakes
 * only the waiters it lets in, not every waiter of the name.
 *
 * <p>When it completes because everything ahead is known and fits, it is {@link #admitted()}: the next
 * poll grants without a read, as the attempt's own read would (see {@link SharedAttempt#proven()}); the
 * watch, or a read where the watch does not reach back, told every deletion since the read, this
 * attempt's own entry's included. The deletion of this attempt's own entry, a TTL without news (a watch
 * on a member that froze says nothing), or the end of the name's watch (see {@link SharedWatch})
 * complete it without admitting it: the poll then reads and tells. A lost session fails it, and so does
 * the driver's close ({@link SharedLocks#register}).
 *
 * <p>Concurrency: {@code ahead}, {@code weight}, {@code admitted} and {@code ownGone} are guarded by
 * {@code this}; the rest is final, {@code done} thread-safe. Deletions arrive from the watch on the I/O
 * thread, holding the watch's monitor (the lock order is attempt, watch, wait: nothing holding a wait's
 * monitor calls out); the timer fires on the driver's threads.
 */
final class SharedWait {

    private final Calls calls;
    private final Share share;
    private final ByteString ownKey;
    /** Our own entry's create revision. */
    private final long mine;
    /** The first revision whose deletions count: the one after the read of {@link #ahead}. */
    private final long from;
    /** Whether the read saw everything ahead (no page it did not read). */
    private final boolean complete;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** The entries read ahead that have not gone yet, and their weight. Guarded by {@code this}. */
    private final Map<ByteString, SharedQueue.Entry> ahead;
    private long weight;
    /** Completed because everything ahead is known and fits. Guarded by {@code this}. */
    private boolean admitted;
    /** Our own entry was deleted: never admitted from then on. Guarded by {@code this}. */
    private boolean ownGone;

    SharedWait(Calls calls, Share share, ByteString ownKey, long mine, SharedQueue.Ahead read) {
        this.calls = calls;
        this.share = share;
        this.ownKey = ownKey;
        this.mine = mine;
        this.from = read.revision() + 1;
        this.complete = read.complete();
        this.ahead = new HashMap<>(read.entries());
        this.weight = read.weight();
    }

    /**
     * Completes as the class says, or fails with what {@code lost} makes of the session's loss; the
     * wait joins the name's watch, and leaves it when it completes.
     */
    CompletableFuture<Void> start(SharedLocks locks, Session session, String prefix, long ttlNanos,
                                  Function<Throwable, Throwable> lost) {
        locks.register(done);
        session.failOnLoss(done, lost);
        if (done.isDone()) {
            return done;
        }
        SharedWatch watch = locks.join(prefix, this);
        // A watch on a member that froze says nothing: poll again at least once per TTL (and let the
        // name's watch start afresh if it told nothing for as long).
        ScheduledFuture<?> quiet = calls.schedule(() -> {
            watch.quiet(ttlNanos);
            done.complete(null);
        }, ttlNanos);
        done.whenComplete((v, error) -> {
            if (quiet != null) {
                quiet.cancel(false);
            }
            watch.leave(this);
        });
        return done;
    }

    /** Ends the wait normally (the attempt is abandoned); it leaves the watch. */
    void cancel() {
        done.complete(null);
    }

    void fail(Throwable error) {
        done.completeExceptionally(error);
    }

    long from() {
        return from;
    }

    /**
     * When the wait completed because everything ahead is known and fits: what is left ahead (the
     * grant's proof, as a read's would be; a watch from its revision would miss nothing); else null,
     * and the poll reads.
     */
    synchronized SharedQueue.Ahead admitted() {
        if (!admitted || !done.isDone() || done.isCompletedExceptionally()) {
            return null;
        }
        return new SharedQueue.Ahead(Map.copyOf(ahead), weight, true, from - 1);
    }

    /**
     * The entry {@code key} was deleted at {@code revision}: ours (the poll tells why), or one read
     * ahead, which may let us in. Called holding the watch's monitor: returns whether the wait is to be
     * completed, which the watch does once it let go of its monitor.
     */
    synchronized boolean deleted(ByteString key, long revision) {
        if (revision < from) {
            return false;
        }
        SharedQueue.Entry entry = ahead.remove(key);
        if (entry != null) {
            return subtracted(entry);
        }
        // After the lookup, both keys' hashes are cached: another key is told apart at once.
        if (!key.equals(ownKey)) {
            return false;
        }
        ownGone = true;
        admitted = false;
        return true;
    }

    /**
     * A read at a revision no earlier than {@link #from()} - 1 found {@code present} (key to create
     * revision) among the entries created from {@link #minAhead()} to {@link #mine()}: the entries read
     * ahead that it did not find (or found created again) are gone, and so is ours if it is not there.
     * Returns whether the wait is to be completed.
     */
    synchronized boolean present(Map<ByteString, Long> present) {
        Long own = present.get(ownKey);
        if (own == null || own != mine) {
            // Ours went: the poll reads and tells.
            ownGone = true;
            admitted = false;
            return true;
        }
        boolean fits = false;
        for (var it = ahead.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<ByteString, SharedQueue.Entry> e = it.next();
            Long created = present.get(e.getKey());
            if (created == null || created != e.getValue().createRevision()) {
                it.remove();
                fits |= subtracted(e.getValue());
            }
        }
        return fits;
    }

    /** Holding {@code this}: takes {@code entry}'s weight off; true when what is left lets us in. */
    private boolean subtracted(SharedQueue.Entry entry) {
        weight -= entry.weight();
        if (!share.fitsBehind(weight)) {
            return false;
        }
        admitted = complete && !ownGone;
        return true;
    }

    /** The oldest create revision read ahead, or 0 (unbounded) when none is left. */
    synchronized long minAhead() {
        return ahead.values().stream().mapToLong(SharedQueue.Entry::createRevision).min().orElse(0);
    }

    long mine() {
        return mine;
    }

    /** Completes the wait (outside the watch's monitor), admitted or not as the deletions said. */
    void wake() {
        done.complete(null);
    }
}
