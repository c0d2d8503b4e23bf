package dev.warden.quota.internal;

import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnection;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * Split (bucketed) accounts on {@code buckets.lua}: routing, gathering, and their balance. The calls
 * themselves are {@link BucketScript}'s, moves between buckets {@link BucketMoves}', and split and merge
 * {@link SplitLifecycle}'s.
 *
 * <p><b>Routing.</b> A change of a split account into {@code N} buckets goes to bucket
 * {@code CRC-32("route:" + request id) mod N}, fenced or not, so a retry reaches the bucket of its first
 * try, whose idempotency record answers it, whether or not it carries the lease the first try carried.
 * A fenced deduction first reads that record (a retry answers from it), then raises the fence mark of
 * every bucket to its token, bucket 0 first (bucket 0 has seen every token), refused when one holds a
 * higher token; only then does it change its bucket, whose mark it checks again in the same script. A
 * superseded holder's change is therefore refused in whichever bucket it lands once a newer holder has
 * fenced, as for an unsplit account; a fenced deduction costs N + 2 calls. Which {@code N} an
 * account has is cached here; a bucket that belongs to another split answers {@code moved} and the cache
 * is read again from bucket 0.
 *
 * <p><b>Gathering (the exhaustion rule).</b> A deduction its bucket {@code b} cannot cover takes, from
 * the other buckets in turn ({@code b+1, b+2, ...}), what it still needs (or 1/N of the source, when that
 * is more), moving each take into {@code b}, until it has enough or has asked every bucket; then it tries
 * again. A round that moved nothing completes every move of the account in flight (taken from a bucket,
 * not yet given; each once) and, when there was one, tries again. It is refused only when a whole round
 * moved nothing, no move was in flight, and {@code b} still falls short. One caller alone is therefore refused only when
 * the account's total is short. With callers running concurrently a refusal while the total sufficed needs
 * quota that moved behind the round (taken from a bucket the round had not reached yet and given to one it
 * had passed, both within the round) or {@value #MAX_ROUNDS} rounds each of which others consumed first.
 *
 * <p><b>Moves are crash-safe</b> (see {@link BucketMoves}): a move taken from a bucket and not yet given is
 * quota in flight, which {@link #balance} gives (once) before it sums.
 *
 * <p>Thread-safe: the split cache is a concurrent map; the rest is immutable (its {@link BucketMoves} is
 * thread-safe).
 */
final class Buckets {

    /** Gathering rounds one deduction makes at most. */
    static final int MAX_ROUNDS = 64;

    private final KeyLayout layout;
    private final RedisConnection commands;
    private final BucketScript script;
    private final BucketMoves moves;
    private final String retentionMillis;
    private final ConcurrentHashMap<String, Integer> splits = new ConcurrentHashMap<>();

    Buckets(KeyLayout layout, RedisConnection commands, BucketScript script, BucketMoves moves, Duration retention) {
        this.layout = layout;
        this.commands = commands;
        this.script = script;
        this.moves = moves;
        this.retentionMillis = Long.toString(retention.toMillis());
    }

    /** The bucket count this instance last saw for the account, or null when it knows it as not split. */
    Integer cached(String account) {
        return splits.get(account);
    }

    void learned(String account, int buckets) {
        if (buckets > 1) {
            splits.put(account, buckets);
        } else {
            splits.remove(account);
        }
    }

    /** Whether an unsplit script answered that the account is split; then {@link #splitOf} says into how many. */
    static boolean isSplit(List<Object> reply) {
        return reply != null && !reply.isEmpty() && "split".equals(reply.get(0));
    }

    /** Whether the unsplit deduction found the account key short while a merge is emptying the buckets into it. */
    static boolean isDraining(List<Object> reply) {
        return reply != null && !reply.isEmpty() && "draining".equals(reply.get(0));
    }

    static int splitOf(List<Object> reply) {
        return (int) Replies.number(reply, 1);
    }

    /** The bucket a request id goes to. */
    static int route(String requestId, int buckets) {
        CRC32 crc = new CRC32();
        crc.update(("route:" + requestId).getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % buckets);
    }

    // ---- changes ----

    /**
     * A deduction, top-up or refund of a split account.
     *
     * @param token the fencing token, or -1 when none
     * @return the outcome, or null when the account is no longer split (the caller runs the unsplit script)
     */
    Outcome change(String account, EntryKind kind, long amount, String requestId, long token, int buckets) {
        int n = buckets;
        int rounds = 0;
        int refreshes = 0;
        boolean toHome = false;
        if (token >= 0) {
            Fenced fenced = fenceAll(account, kind, amount, requestId, token, n);
            if (fenced.unsplit()) {
                return null;
            }
            if (fenced.answer() != null) {
                return fenced.answer();
            }
        }
        while (true) {
            int b = toHome ? 0 : route(requestId, n);
            List<Object> reply = script.call("change", account, b,
                    new String[] {layout.bucketRequestKey(account, b, requestId), layout.journal(layout.bucketPartition(account, b))},
                    Integer.toString(n), kind.wireName(), Long.toString(amount), requestId,
                    token < 0 ? "-" : Long.toString(token), retentionMillis);
            String status = Replies.text(reply, 0);
            if (status.equals("moved")) {
                if (++refreshes > 16) {
                    throw new QuotaException(Reason.PROTOCOL, "account " + account + " keeps changing its split");
                }
                int now = refresh(account);
                if (now <= 1) {
                    return null;
                }
                // The same split, yet its bucket is closed (a merge raced a split): bucket 0 serves instead.
                toHome |= now == n;
                n = now;
                continue;
            }
            if (!status.equals("insufficient") || kind != EntryKind.DEDUCT) {
                return Replies.outcome(reply, account, script.markerOf(account, b), token);
            }
            long have = Replies.number(reply, 1);
            Gathered g = gather(account, n, b, amount - have);
            if (g.stale) {
                if (++refreshes > 16) {
                    throw new QuotaException(Reason.PROTOCOL, "account " + account + " keeps changing its split");
                }
                int now = refresh(account);
                if (now <= 1) {
                    return null;
                }
                if (now != n) {
                    n = now;
                    continue;
                }
                // The same split: the closed buckets it met have nothing to give; the round stands as it is.
            }
            if (++rounds > MAX_ROUNDS) {
                return new Outcome.Insufficient(have + g.moved);
            }
            // Before refusing, complete every move in flight between the account's buckets (each once): when
            // there was one, try again.
            if (g.moved == 0 && moves.settle(account, n) == 0) {
                return new Outcome.Insufficient(have);
            }
        }
    }

    /** What {@link #fenceAll} found: an answer that ends the change, or that the account is no longer split. */
    private record Fenced(Outcome answer, boolean unsplit) {
    }

    /**
     * Before a fenced change of a split account: the request's recorded answer when there is one (a retry),
     * else every bucket's fence mark raised to {@code token}, bucket 0 first. No answer: go on with the
     * change; {@link Outcome.StaleFence} when a bucket has seen a higher token.
     */
    private Fenced fenceAll(String account, EntryKind kind, long amount, String requestId, long token, int n) {
        String record = script.await(commands.async()
                .get(layout.bucketRequestKey(account, route(requestId, n), requestId)).toCompletableFuture(),
                "read the record of request " + requestId + " of " + account);
        if (record != null) {
            // kind|amount|balance|entry|account, as the scripts write it (the account last: it may hold '|').
            String[] f = record.split("\\|", 5);
            if (f.length == 5 && f[4].equals(account)) {
                if (f[0].equals(kind.wireName()) && f[1].equals(Long.toString(amount))) {
                    return new Fenced(new Outcome.Duplicate(new Outcome.Applied(Long.parseLong(f[2]), f[3])), false);
                }
                return new Fenced(new Outcome.Conflict(EntryKind.fromWireName(f[0]), account, Long.parseLong(f[1])), false);
            }
        }
        int m = n;
        for (int i = 0; i < m; i++) {
            List<Object> reply = script.call("fence", account, i, new String[0], Long.toString(token));
            switch (Replies.text(reply, 0)) {
                case "fenced" -> {
                    if (i == 0) {
                        m = Math.max(n, (int) Replies.number(reply, 1)); // the split now, whatever this instance cached
                    }
                }
                case "stale_fence" -> {
                    return new Fenced(new Outcome.StaleFence(token, Replies.number(reply, 1)), false);
                }
                case "not_found" -> {
                    return new Fenced(null, true); // gone from bucket 0: the unsplit path answers
                }
                default -> throw Replies.notAnOutcome(reply, Replies.text(reply, 0), account,
                        script.markerOf(account, i));
            }
        }
        return new Fenced(null, false);
    }

    /** What one round moved; whether it met a bucket that is closed or of another split. */
    private record Gathered(long moved, boolean stale) {
    }

    /** One round: moves into bucket {@code b} from the others until {@code need} is met or each was asked once. */
    private Gathered gather(String account, int n, int b, long need) {
        long moved = 0;
        boolean stale = false;
        for (int k = 1; k < n && moved < need; k++) {
            int j = (b + k) % n;
            String id = moves.moveId();
            List<Object> reply = script.call("take", account, j,
                    new String[] {script.journalOf(account, j), layout.movesKey(account, j)},
                    Integer.toString(n), id, Integer.toString(b), Long.toString(need - moved), "0");
            String status = Replies.text(reply, 0);
            if (status.equals("moved")) {
                stale = true;
                continue;
            }
            long x = moves.taken(reply, account);
            if (x > 0) {
                moves.deliver(account, j, b, id, x, false);
                moved += x;
            }
        }
        return new Gathered(moved, stale && moved == 0);
    }

    // ---- reads ----

    /** Reads bucket 0 again and caches what it says; 1 when the account is not split (or gone). */
    int refresh(String account) {
        BucketScript.Bucket home = script.read(account, 0);
        int n = home.balance() < 0 ? 1 : home.split();
        learned(account, n);
        return n;
    }

    /**
     * The balance of an account bucket 0 says is split (or being merged): the pending moves of every
     * bucket are given first, then the buckets are summed (plus what is still pending).
     */
    OptionalLong balance(String account) {
        BucketScript.Bucket home = script.read(account, 0);
        if (home.balance() < 0) {
            return OptionalLong.empty();
        }
        int m = Math.max(home.split(), home.drain());
        learned(account, home.split());
        moves.settle(account, m);
        long sum = 0;
        for (int i = 0; i < m; i++) {
            BucketScript.Bucket b = script.read(account, i);
            sum += Math.max(0, b.balance());
            for (BucketScript.Pending p : b.pending()) {
                if (!p.given()) {
                    sum += p.amount(); // taken and not yet given: in flight, the account's still
                }
            }
        }
        return OptionalLong.of(sum);
    }

    /**
     * Waits (1 ms, doubling to 50 ms) until no merge is emptying the account's buckets into its key, at most
     * {@code nanos}; a merge is one caller's, which a deduction does not take over.
     */
    void awaitMerged(String account, long nanos) {
        long deadline = System.nanoTime() + nanos;
        long pause = 1;
        while (script.read(account, 0).drain() > 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new QuotaException(Reason.UNAVAILABLE, "account " + account + " has been being merged for longer"
                        + " than " + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms: run merge again to complete it");
            }
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                throw QuotaException.interrupted("interrupted while waiting for the merge of account " + account, e);
            }
            pause = Math.min(50, pause * 2);
        }
    }
}
