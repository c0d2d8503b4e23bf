package dev.warden.quota.internal;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnection;

import java.util.List;

/**
 * A split account's lifecycle on {@code buckets.lua}: {@link #split} creates the buckets, routes the account
 * to them and spreads bucket 0's quota over them; {@link #merge} routes it back, closes the buckets and moves
 * what they hold to bucket 0 (the account key). Either first completes a merge another caller left
 * half-done, and keeps {@link Buckets}' split cache in step with what it did.
 *
 * <p>Thread-safe: immutable.
 */
final class SplitLifecycle {

    private final KeyLayout layout;
    private final RedisConnection commands;
    private final BucketScript script;
    private final BucketMoves moves;
    private final Buckets buckets;

    SplitLifecycle(KeyLayout layout, RedisConnection commands, BucketScript script, BucketMoves moves,
                   Buckets buckets) {
        this.layout = layout;
        this.commands = commands;
        this.script = script;
        this.moves = moves;
        this.buckets = buckets;
    }

    SplitOutcome split(String account, int n) {
        for (int attempt = 0; attempt < 8; attempt++) {
            BucketScript.Bucket home = script.read(account, 0);
            if (home.balance() < 0) {
                return new SplitOutcome.AccountNotFound(account);
            }
            if (home.drain() > 0) {
                drain(account, home.drain());
                continue;
            }
            if (home.split() > 1) {
                buckets.learned(account, home.split());
                return new SplitOutcome.AlreadySplit(home.split());
            }
            // New buckets start with bucket 0's fence mark: a holder it has superseded is refused in them too.
            String fence = script.await(commands.async().hget(layout.accountKey(account), "fence")
                    .toCompletableFuture(), "read the fence mark of " + account);
            for (int i = 1; i < n; i++) {
                List<Object> reply = script.call("create", account, i, new String[] {layout.movesKey(account, i)},
                        Integer.toString(n), fence == null ? "-" : fence);
                if (!Replies.text(reply, 0).equals("created")) {
                    throw new QuotaException(Reason.PROTOCOL, "bucket " + i + " of account " + account
                            + " is in use (" + reply + "); merge the account first");
                }
            }
            List<Object> routed = script.call("route", account, 0, new String[0], "1", Integer.toString(n), "0");
            if (!Replies.text(routed, 0).equals("routed")) {
                continue;
            }
            buckets.learned(account, n);
            long share = script.read(account, 0).balance() / n;
            for (int i = 1; i < n && share > 0; i++) {
                String id = moves.moveId();
                List<Object> reply = script.call("take", account, 0,
                        new String[] {script.journalOf(account, 0), layout.movesKey(account, 0)},
                        Integer.toString(n), id, Integer.toString(i), Long.toString(share), "1");
                if (!Replies.text(reply, 0).equals("taken")) {
                    break; // merged meanwhile: the rest stays in bucket 0
                }
                long x = moves.taken(reply, account);
                if (x > 0) {
                    moves.deliver(account, 0, i, id, x, false);
                }
            }
            return new SplitOutcome.Split(n);
        }
        throw new QuotaException(Reason.PROTOCOL, "account " + account + " kept changing while being split");
    }

    SplitOutcome merge(String account) {
        for (int attempt = 0; attempt < 8; attempt++) {
            BucketScript.Bucket home = script.read(account, 0);
            if (home.balance() < 0) {
                return new SplitOutcome.AccountNotFound(account);
            }
            if (home.split() <= 1 && home.drain() == 0) {
                buckets.learned(account, 1);
                return new SplitOutcome.NotSplit();
            }
            int n = home.drain();
            if (home.split() > 1) {
                // Credits to several buckets can add up beyond one balance's limit: such a merge could not land.
                long total = buckets.balance(account).orElse(0);
                if (total > dev.warden.quota.Amount.MAX) {
                    return new SplitOutcome.TooLarge(total);
                }
                String s = Integer.toString(home.split());
                List<Object> routed = script.call("route", account, 0, new String[0], s, "1", s);
                if (!Replies.text(routed, 0).equals("routed")) {
                    continue;
                }
                n = home.split();
            }
            buckets.learned(account, 1);
            drain(account, n);
            return new SplitOutcome.Merged(n);
        }
        throw new QuotaException(Reason.PROTOCOL, "account " + account + " kept changing while being merged");
    }

    /**
     * Closes buckets 1..n-1 moving what each holds to bucket 0, gives every pending move, deletes the emptied
     * buckets, then ends the merge.
     */
    private void drain(String account, int n) {
        for (int i = 1; i < n; i++) {
            String id = moves.moveId();
            List<Object> reply = script.call("close", account, i,
                    new String[] {script.journalOf(account, i), layout.movesKey(account, i)}, "-", id, "0", "0", "0");
            if (Replies.text(reply, 0).equals("taken")) {
                long x = moves.taken(reply, account);
                if (x > 0) {
                    moves.deliver(account, i, 0, id, x, false);
                }
            }
        }
        moves.settle(account, n);
        for (int i = 1; i < n; i++) {
            script.call("drop", account, i, new String[] {layout.movesKey(account, i)});
        }
        script.call("route", account, 0, new String[0], "1", "1", "0");
        buckets.learned(account, 1);
    }
}
