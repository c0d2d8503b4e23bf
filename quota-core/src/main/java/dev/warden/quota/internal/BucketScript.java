package dev.warden.quota.internal;

import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.ScriptRunner;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The wire protocol of {@code buckets.lua}, one bucket of one account per call: the keys and leading
 * arguments every operation takes (the bucket's partition marker, its key, the op, the account, the
 * bucket's index, the marker value), the failures any operation may answer, and what {@code read} answers.
 * Which operation to call when is {@link Buckets}', {@link BucketMoves}' and {@link SplitLifecycle}'.
 *
 * <p>Thread-safe: immutable.
 */
final class BucketScript {

    /** One bucket as read: its balance (-1 when absent), its split, bucket 0's drain, and its pending moves. */
    record Bucket(int index, long balance, int split, int drain, List<Pending> pending) {
    }

    record Pending(String id, int target, long amount, boolean given) {
    }

    private final KeyLayout layout;
    private final ScriptRunner scripts;
    private final RedisConnection commands;
    private final String endpoint;
    private final long waitNanos;

    BucketScript(KeyLayout layout, ScriptRunner scripts, RedisConnection commands, String endpoint, long waitNanos) {
        this.layout = layout;
        this.scripts = scripts;
        this.commands = commands;
        this.endpoint = endpoint;
        this.waitNanos = waitNanos;
    }

    Bucket read(String account, int i) {
        List<Object> reply = call("read", account, i, new String[] {layout.movesKey(account, i)});
        if (!Replies.text(reply, 0).equals("bucket")) {
            throw Replies.notAnOutcome(reply, Replies.text(reply, 0), account, markerOf(account, i));
        }
        String balance = Replies.text(reply, 1);
        List<Pending> pending = new ArrayList<>();
        for (int k = 4; k + 3 < reply.size(); k += 4) {
            pending.add(new Pending(Replies.text(reply, k), (int) Replies.number(reply, k + 1), Replies.number(reply, k + 2),
                    "1".equals(Replies.text(reply, k + 3))));
        }
        return new Bucket(i, balance.isEmpty() ? -1 : Long.parseLong(balance), (int) Replies.number(reply, 2),
                (int) Replies.number(reply, 3), pending);
    }

    String journalOf(String account, int i) {
        return layout.journal(layout.bucketPartition(account, i));
    }

    String markerOf(String account, int i) {
        return layout.marker(layout.bucketPartition(account, i));
    }

    List<Object> call(String op, String account, int i, String[] keys, String... args) {
        int p = layout.bucketPartition(account, i);
        String[] allKeys = new String[keys.length + 2];
        allKeys[0] = layout.marker(p);
        allKeys[1] = layout.bucketKey(account, i);
        System.arraycopy(keys, 0, allKeys, 2, keys.length);
        String[] allArgs = new String[args.length + 4];
        allArgs[0] = op;
        allArgs[1] = account;
        allArgs[2] = Integer.toString(i);
        allArgs[3] = layout.markerValue();
        System.arraycopy(args, 0, allArgs, 4, args.length);
        List<Object> reply = await(scripts.run(commands, Scripts.of(Scripts.Script.BUCKETS), allKeys, allArgs),
                op + " bucket " + i + " of " + account);
        String status = Replies.text(reply, 0);
        if (status.equals("no_marker") || status.equals("marker_mismatch") || status.equals("invalid_argument")
                || status.equals("invalid_id") || status.equals("corrupt")) {
            throw Replies.notAnOutcome(reply, status, account, allKeys[0]);
        }
        return reply;
    }

    /** Waits for a call to this endpoint as long as a split account's calls wait; errors translated. */
    <T> T await(CompletableFuture<T> call, String what) {
        return Errors.await(call, waitNanos, endpoint, what);
    }
}
