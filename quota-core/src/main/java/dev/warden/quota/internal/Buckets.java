package dev.warden.quota.internal;

import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.spi.KeyLayout;
import dev.warden.quota.spi.RedisConnection;
import dev.warden.quota.spi.ScriptRunner;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

/**
 * Split (bucketed) accounts on {@code buckets.lua}: routing, gathering, moves, split and merge.
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
 * <p><b>Moves are crash-safe.</b> take (source: balance down, a pending record, journaled), give (target:
 * idempotent by the move id, journaled; its record without a lifetime), mark (source: the pending record
 * says given), expire (target: the record lives the retention from now), finish (source: pending record
 * deleted). A settling that finds a pending record completes it from where it stopped: not yet marked, it
 * gives again (the record answers, however late); marked, it only expires and finishes. A pending record is
 * quota in flight: {@link #balance}, {@link #split} and {@link #merge} give every pending move they find
 * (again: the give record makes it once) before they sum or close. A give to a closed bucket is recorded
 * as redirected and goes to bucket 0.
 *
 * <p>Thread-safe: the split cache is a concurrent map; the rest is immutable.
 */
final class Buckets {

    /** Gathering rounds one deduction makes at most. */
    static final int MAX_ROUNDS = 64;

    private final KeyLayout layout;
    private final ScriptRunner scripts;
    private final RedisConnection commands;
    private final String retentionMillis;
    private final String endpoint;
    private final long waitNanos;
    private final ConcurrentHashMap<String, Integer> splits = new ConcurrentHashMap<>();
    private final String instance = Long.toHexString(ThreadLocalRandom.current().nextLong() | Long.MIN_VALUE);
    private final AtomicLong moves = new AtomicLong();

    Buckets(KeyLayout layout, ScriptRunner scripts, RedisConnection commands, Duration retention, String endpoint,
            long waitNanos) {
        this.layout = layout;
        this.scripts = scripts;
        this.commands = commands;
        this.retentionMillis = Long.toString(retention.toMillis());
        this.endpoint = endpoint;
        this.waitNanos = waitNanos;
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
            List<Object> reply = call("change", account, b,
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
                return Replies.outcome(reply, account, markerOf(account, b), token);
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
            if (g.moved == 0 && settle(account, n) == 0) {
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
        String record = await(commands.async().get(layout.bucketRequestKey(account, route(requestId, n), requestId))
                .toCompletableFuture(), "read the record of request " + requestId + " of " + account);
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
            List<Object> reply = call("fence", account, i, new String[0], Long.toString(token));
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
                default -> throw Replies.notAnOutcome(reply, Replies.text(reply, 0), account, markerOf(account, i));
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
            String id = moveId();
            List<Object> reply = call("take", account, j, new String[] {journalOf(account, j), layout.movesKey(account, j)},
                    Integer.toString(n), id, Integer.toString(b), Long.toString(need - moved), "0");
            String status = Replies.text(reply, 0);
            if (status.equals("moved")) {
                stale = true;
                continue;
            }
            long x = taken(reply, account);
            if (x > 0) {
                deliver(account, j, b, id, x, false);
                moved += x;
            }
        }
        return new Gathered(moved, stale && moved == 0);
    }

    /**
     * Completes a taken move: gives it to its target (bucket 0 when the target is closed) and marks it given at
     * its source, unless the source already says so; then lets the give record live the retention, and
     * finishes the move at its source. Until the source says "given", the give record has no lifetime, so a
     * settling however late gives the move once.
     */
    private void deliver(String account, int from, int to, String id, long amount, boolean given) {
        if (!given) {
            String status = give(account, to, id, amount);
            if (status.equals("redirected") && to != 0) {
                status = give(account, 0, id, amount);
            }
            if (!status.equals("given")) {
                throw new QuotaException(Reason.PROTOCOL, "moving quota of account " + account + " to bucket " + to
                        + " answered " + status);
            }
            call("mark", account, from, new String[] {layout.movesKey(account, from)}, id);
        }
        call("expire", account, to, new String[] {layout.movedKey(account, to, id)}, id, retentionMillis);
        if (to != 0) {
            call("expire", account, 0, new String[] {layout.movedKey(account, 0, id)}, id, retentionMillis); // a redirect's
        }
        call("finish", account, from, new String[] {layout.movesKey(account, from)}, id);
    }

    private String give(String account, int to, String id, long amount) {
        List<Object> reply = call("give", account, to, new String[] {journalOf(account, to), layout.movedKey(account, to, id)},
                id, Long.toString(amount));
        return Replies.text(reply, 0);
    }

    private long taken(List<Object> reply, String account) {
        if (!Replies.text(reply, 0).equals("taken")) {
            throw Replies.notAnOutcome(reply, Replies.text(reply, 0), account, "");
        }
        return Replies.number(reply, 1);
    }

    // ---- reads ----

    /** One bucket as read: its balance (-1 when absent), its split, bucket 0's drain, and its pending moves. */
    private record Bucket(int index, long balance, int split, int drain, List<Pending> pending) {
    }

    private record Pending(String id, int target, long amount, boolean given) {
    }

    private Bucket read(String account, int i) {
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

    /** Reads bucket 0 again and caches what it says; 1 when the account is not split (or gone). */
    int refresh(String account) {
        Bucket home = read(account, 0);
        int n = home.balance < 0 ? 1 : home.split;
        learned(account, n);
        return n;
    }

    /**
     * The balance of an account bucket 0 says is split (or being merged): the pending moves of every
     * bucket are given first, then the buckets are summed (plus what is still pending).
     */
    OptionalLong balance(String account) {
        Bucket home = read(account, 0);
        if (home.balance < 0) {
            return OptionalLong.empty();
        }
        int m = Math.max(home.split, home.drain);
        learned(account, home.split);
        settle(account, m);
        long sum = 0;
        for (int i = 0; i < m; i++) {
            Bucket b = read(account, i);
            sum += Math.max(0, b.balance);
            for (Pending p : b.pending) {
                if (!p.given) {
                    sum += p.amount; // taken and not yet given: in flight, the account's still
                }
            }
        }
        return OptionalLong.of(sum);
    }

    /** Gives every move pending at buckets 0..m-1 (again; a given one answers from its record) and finishes it. */
    private int settle(String account, int m) {
        int delivered = 0;
        for (int i = 0; i < m; i++) {
            for (Pending p : read(account, i).pending) {
                deliver(account, i, p.target, p.id, p.amount, p.given);
                delivered++;
            }
        }
        return delivered;
    }

    /**
     * Waits (1 ms, doubling to 50 ms) until no merge is emptying the account's buckets into its key, at most
     * {@code nanos}; a merge is one caller's, which a deduction does not take over.
     */
    void awaitMerged(String account, long nanos) {
        long deadline = System.nanoTime() + nanos;
        long pause = 1;
        while (read(account, 0).drain > 0) {
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

    // ---- split and merge ----

    SplitOutcome split(String account, int n) {
        for (int attempt = 0; attempt < 8; attempt++) {
            Bucket home = read(account, 0);
            if (home.balance < 0) {
                return new SplitOutcome.AccountNotFound(account);
            }
            if (home.drain > 0) {
                drain(account, home.drain);
                continue;
            }
            if (home.split > 1) {
                learned(account, home.split);
                return new SplitOutcome.AlreadySplit(home.split);
            }
            // New buckets start with bucket 0's fence mark: a holder it has superseded is refused in them too.
            String fence = await(commands.async().hget(layout.accountKey(account), "fence").toCompletableFuture(),
                    "read the fence mark of " + account);
            for (int i = 1; i < n; i++) {
                List<Object> reply = call("create", account, i, new String[] {layout.movesKey(account, i)}, Integer.toString(n),
                        fence == null ? "-" : fence);
                if (!Replies.text(reply, 0).equals("created")) {
                    throw new QuotaException(Reason.PROTOCOL, "bucket " + i + " of account " + account
                            + " is in use (" + reply + "); merge the account first");
                }
            }
            List<Object> routed = call("route", account, 0, new String[0], "1", Integer.toString(n), "0");
            if (!Replies.text(routed, 0).equals("routed")) {
                continue;
            }
            learned(account, n);
            long share = read(account, 0).balance / n;
            for (int i = 1; i < n && share > 0; i++) {
                String id = moveId();
                List<Object> reply = call("take", account, 0, new String[] {journalOf(account, 0), layout.movesKey(account, 0)},
                        Integer.toString(n), id, Integer.toString(i), Long.toString(share), "1");
                if (!Replies.text(reply, 0).equals("taken")) {
                    break; // merged meanwhile: the rest stays in bucket 0
                }
                long x = taken(reply, account);
                if (x > 0) {
                    deliver(account, 0, i, id, x, false);
                }
            }
            return new SplitOutcome.Split(n);
        }
        throw new QuotaException(Reason.PROTOCOL, "account " + account + " kept changing while being split");
    }

    SplitOutcome merge(String account) {
        for (int attempt = 0; attempt < 8; attempt++) {
            Bucket home = read(account, 0);
            if (home.balance < 0) {
                return new SplitOutcome.AccountNotFound(account);
            }
            if (home.split <= 1 && home.drain == 0) {
                learned(account, 1);
                return new SplitOutcome.NotSplit();
            }
            int n = home.drain;
            if (home.split > 1) {
                // Credits to several buckets can add up beyond one balance's limit: such a merge could not land.
                long total = balance(account).orElse(0);
                if (total > dev.warden.quota.Amount.MAX) {
                    return new SplitOutcome.TooLarge(total);
                }
                String s = Integer.toString(home.split);
                List<Object> routed = call("route", account, 0, new String[0], s, "1", s);
                if (!Replies.text(routed, 0).equals("routed")) {
                    continue;
                }
                n = home.split;
            }
            learned(account, 1);
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
            String id = moveId();
            List<Object> reply = call("close", account, i, new String[] {journalOf(account, i), layout.movesKey(account, i)},
                    "-", id, "0", "0", "0");
            if (Replies.text(reply, 0).equals("taken")) {
                long x = taken(reply, account);
                if (x > 0) {
                    deliver(account, i, 0, id, x, false);
                }
            }
        }
        settle(account, n);
        for (int i = 1; i < n; i++) {
            call("drop", account, i, new String[] {layout.movesKey(account, i)});
        }
        call("route", account, 0, new String[0], "1", "1", "0");
        learned(account, 1);
    }

    // ---- plumbing ----

    private String moveId() {
        return "mv-" + instance + "-" + moves.incrementAndGet();
    }

    private String journalOf(String account, int i) {
        return layout.journal(layout.bucketPartition(account, i));
    }

    private String markerOf(String account, int i) {
        return layout.marker(layout.bucketPartition(account, i));
    }

    private List<Object> call(String op, String account, int i, String[] keys, String... args) {
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

    private <T> T await(CompletableFuture<T> call, String what) {
        return Errors.await(call, waitNanos, endpoint, what);
    }
}
