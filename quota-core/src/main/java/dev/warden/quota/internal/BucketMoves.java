package dev.warden.quota.internal;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.redis.KeyLayout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Moves of quota between the buckets of a split account, each completed once however late.
 *
 * <p><b>Moves are crash-safe.</b> take (source: balance down, a pending record, journaled), give (target:
 * idempotent by the move id, journaled; its record without a lifetime), mark (source: the pending record
 * says given), expire (target: the record lives the retention from now), finish (source: pending record
 * deleted). A settling that finds a pending record completes it from where it stopped: not yet marked, it
 * gives again (the record answers, however late); marked, it only expires and finishes. A pending record is
 * quota in flight: {@link Buckets#balance}, {@link SplitLifecycle#split} and {@link SplitLifecycle#merge}
 * give every pending move they find (again: the give record makes it once) before they sum or close. A give
 * to a closed bucket is recorded as redirected and goes to bucket 0.
 *
 * <p>Thread-safe: the move counter is atomic; the rest is immutable.
 */
final class BucketMoves {

    private final KeyLayout layout;
    private final BucketScript script;
    private final String retentionMillis;
    private final String instance = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    private final AtomicLong moves = new AtomicLong();

    BucketMoves(KeyLayout layout, BucketScript script, Duration retention) {
        this.layout = layout;
        this.script = script;
        this.retentionMillis = Long.toString(retention.toMillis());
    }

    /** A new move's id: this instance's random part and its counter. */
    String moveId() {
        return "mv-" + instance + "-" + moves.incrementAndGet();
    }

    /**
     * Completes a taken move: gives it to its target (bucket 0 when the target is closed) and marks it given at
     * its source, unless the source already says so; then lets the give record live the retention, and
     * finishes the move at its source. Until the source says "given", the give record has no lifetime, so a
     * settling however late gives the move once.
     */
    void deliver(String account, int from, int to, String id, long amount, boolean given) {
        if (!given) {
            String status = give(account, to, id, amount);
            if (status.equals("redirected") && to != 0) {
                status = give(account, 0, id, amount);
            }
            if (!status.equals("given")) {
                throw new QuotaException(Reason.PROTOCOL, "moving quota of account " + account + " to bucket " + to
                        + " answered " + status);
            }
            script.call("mark", account, from, new String[] {layout.movesKey(account, from)}, id);
        }
        script.call("expire", account, to, new String[] {layout.movedKey(account, to, id)}, id, retentionMillis);
        if (to != 0) {
            script.call("expire", account, 0, new String[] {layout.movedKey(account, 0, id)}, id,
                    retentionMillis); // a redirect's
        }
        script.call("finish", account, from, new String[] {layout.movesKey(account, from)}, id);
    }

    private String give(String account, int to, String id, long amount) {
        List<Object> reply = script.call("give", account, to,
                new String[] {script.journalOf(account, to), layout.movedKey(account, to, id)}, id,
                Long.toString(amount));
        return Replies.text(reply, 0);
    }

    /** What a take (or a close) moved out of its bucket. */
    long taken(List<Object> reply, String account) {
        if (!Replies.text(reply, 0).equals("taken")) {
            throw Replies.notAnOutcome(reply, Replies.text(reply, 0), account, "");
        }
        return Replies.number(reply, 1);
    }

    /** Gives every move pending at buckets 0..m-1 (again; a given one answers from its record) and finishes it. */
    int settle(String account, int m) {
        int delivered = 0;
        for (int i = 0; i < m; i++) {
            for (BucketScript.Pending p : script.read(account, i).pending()) {
                deliver(account, i, p.target(), p.id(), p.amount(), p.given());
                delivered++;
            }
        }
        return delivered;
    }
}
