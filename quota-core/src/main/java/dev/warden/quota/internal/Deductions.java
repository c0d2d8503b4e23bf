package dev.warden.quota.internal;

import dev.warden.quota.EntryKind;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.ScriptRunner;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Where a balance change goes: the unsplit scripts ({@code deduct.lua}, {@code credit.lua}) for an
 * account not known to be split, whose answer may be that it is split (or draining into a merge);
 * {@link Buckets} for a split account. Arguments are checked by the caller; this class only routes.
 *
 * <p>A split account's deduction may take several calls in turn, so on the asynchronous paths it runs
 * on a bounded pool of Warden's own threads, never on Lettuce's I/O or event-executor threads.
 *
 * <p>Thread-safe: immutable apart from the pool, which is.
 */
final class Deductions implements AutoCloseable {

    private static final String NO_TOKEN = "-";
    /** Split accounts' deductions in flight at once on the asynchronous paths; more wait in line. */
    private static final int SPLIT_ROUTING_THREADS = 16;
    /**
     * How many wait in line at most: memory stays bounded when callers send faster than split accounts are
     * served; beyond it a deduction fails at once (UNAVAILABLE, nothing sent to its bucket) for the caller
     * to retry with its request id.
     */
    static final int SPLIT_ROUTING_QUEUE = 10_000;
    /** Routings after which an account that keeps changing its split is a protocol error. */
    private static final int MAX_ROUTINGS = 16;

    private final KeyLayout layout;
    private final ScriptRunner scripts;
    private final RedisConnection commands;
    private final Buckets buckets;
    private final String retentionMillis;
    private final long syncWaitNanos;
    private final String endpoint;
    private final ThreadPoolExecutor splitRouting;

    Deductions(KeyLayout layout, ScriptRunner scripts, RedisConnection commands, Buckets buckets, Duration retention,
               long syncWaitNanos, String endpoint) {
        this.layout = layout;
        this.scripts = scripts;
        this.commands = commands;
        this.buckets = buckets;
        this.retentionMillis = Long.toString(retention.toMillis());
        this.syncWaitNanos = syncWaitNanos;
        this.endpoint = endpoint;
        this.splitRouting = new ThreadPoolExecutor(SPLIT_ROUTING_THREADS, SPLIT_ROUTING_THREADS, 30, TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(SPLIT_ROUTING_QUEUE), runnable -> {
                    Thread t = new Thread(runnable, "warden-quota-split");
                    t.setDaemon(true);
                    return t;
                });
        this.splitRouting.allowCoreThreadTimeOut(true);
    }

    /** A deduction on the caller's thread; {@code token} is the lease's fencing token, or -1. */
    Outcome deduct(String account, long amount, String requestId, long token) {
        return routed(account, EntryKind.DEDUCT, amount, requestId, token,
                () -> raw(commands, account, amount, requestId, token, NO_TOKEN), "deduct " + account);
    }

    /** A top-up or refund on the caller's thread. */
    Outcome credit(EntryKind kind, String account, long amount, String requestId) {
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.requestKey(account, requestId),
                layout.journal(p)};
        return routed(account, kind, amount, requestId, -1, () -> scripts.run(commands, Scripts.of(Scripts.Script.CREDIT),
                keys, account, Long.toString(amount), requestId, kind.wireName(), retentionMillis, layout.markerValue()),
                kind.wireName() + " " + account);
    }

    /**
     * A deduction answered asynchronously: one script call on {@code via} (a batch connection sends
     * it with the rest of its batch) unless the account is, or turns out to be, split.
     */
    CompletableFuture<Outcome> deductAsync(RedisConnection via, String account, long amount, String requestId, long token) {
        if (buckets.cached(account) != null) {
            return onSplitRouting(account, amount, requestId, token);
        }
        String marker = layout.markerOf(account);
        return raw(via, account, amount, requestId, token, NO_TOKEN).thenCompose(reply -> {
            if (Buckets.isDraining(reply)) {
                return onSplitRouting(account, amount, requestId, token);
            }
            if (!Buckets.isSplit(reply)) {
                return CompletableFuture.completedFuture(Replies.outcome(reply, account, marker, token));
            }
            buckets.learned(account, Buckets.splitOf(reply));
            return onSplitRouting(account, amount, requestId, token);
        });
    }

    private CompletableFuture<Outcome> onSplitRouting(String account, long amount, String requestId, long token) {
        try {
            return CompletableFuture.supplyAsync(() -> deduct(account, amount, requestId, token), splitRouting);
        } catch (RejectedExecutionException e) {
            return CompletableFuture.failedFuture(new QuotaException(Reason.UNAVAILABLE, SPLIT_ROUTING_QUEUE
                    + " deductions of split accounts are already waiting (or the service is closing); the deduction"
                    + " of " + account + " was not sent: retry it with its request id", e));
        }
    }

    /**
     * A change on the calling thread: to the buckets when the account is known to be split, else the
     * unsplit script, whose answer may be that the account is split (then to the buckets).
     */
    private Outcome routed(String account, EntryKind kind, long amount, String requestId, long token,
                           Supplier<CompletableFuture<List<Object>>> unsplit, String what) {
        for (int attempt = 0; attempt < MAX_ROUTINGS; attempt++) {
            Integer n = buckets.cached(account);
            if (n != null) {
                Outcome outcome = buckets.change(account, kind, amount, requestId, token, n);
                if (outcome != null) {
                    return outcome;
                }
            }
            List<Object> reply = Errors.await(unsplit.get(), syncWaitNanos, endpoint, what);
            if (Buckets.isDraining(reply)) {
                // The account key is short while a merge moves the buckets' quota into it: wait for the merge.
                buckets.awaitMerged(account, syncWaitNanos);
                continue;
            }
            if (!Buckets.isSplit(reply)) {
                return Replies.outcome(reply, account, layout.markerOf(account), token);
            }
            buckets.learned(account, Buckets.splitOf(reply));
        }
        throw new QuotaException(Reason.PROTOCOL, "account " + account + " keeps changing its split");
    }

    /**
     * Sends, without waiting, a combined round's unsplit deductions of one account in one script call, each an
     * amount priced on a balance: the script applies each only to that exact balance and otherwise answers
     * {@code moved} for it (see {@link #isMoved}), writing nothing for it. The answer holds one reply per
     * deduction, in order, each as a plain deduction's (split and draining included).
     */
    CompletableFuture<List<Object>> sendPricedOn(String account, List<PricedDeduction> round, long token) {
        int p = layout.partition(account);
        String[] keys = new String[3 + round.size()];
        keys[0] = layout.marker(p);
        keys[1] = layout.accountKey(account);
        keys[2] = layout.journal(p);
        String[] args = new String[8 + 3 * round.size()];
        args[0] = account;
        args[1] = NO_TOKEN;
        args[2] = NO_TOKEN;
        args[3] = token < 0 ? NO_TOKEN : Long.toString(token);
        args[4] = retentionMillis;
        args[5] = layout.markerValue();
        args[6] = "many";
        args[7] = Integer.toString(round.size());
        for (int i = 0; i < round.size(); i++) {
            PricedDeduction d = round.get(i);
            keys[3 + i] = layout.requestKey(account, d.requestId());
            args[8 + 3 * i] = Long.toString(d.amount());
            args[9 + 3 * i] = d.requestId();
            args[10 + 3 * i] = Long.toString(d.pricedOn());
        }
        return scripts.run(commands, Scripts.of(Scripts.Script.DEDUCT), keys, args);
    }

    /** One deduction of a combined round: {@code amount} priced on the balance {@code pricedOn}. */
    record PricedDeduction(String requestId, long amount, long pricedOn) {
    }

    /** The most deductions one combined round sends in one script call. */
    static final int MAX_PRICED_ON = 64;

    /**
     * Sends, without waiting, the reads of the idempotency records of an unsplit account's request ids in one
     * {@code MGET} (the keys share the account's partition, so its slot); {@link #recorded(String, String)} reads
     * each answer.
     */
    CompletableFuture<List<String>> sendRecordReads(String account, List<String> requestIds) {
        String[] keys = requestIds.stream().map(r -> layout.requestKey(account, r)).toArray(String[]::new);
        return commands.async().mget(keys).toCompletableFuture()
                .thenApply(values -> values.stream().map(kv -> kv.hasValue() ? kv.getValue() : null).toList());
    }

    /** Whether the engine knows the account as split (its changes go to the buckets). */
    boolean knownSplit(String account) {
        return buckets.cached(account) != null;
    }

    /** Remembers the split an unsplit script's {@code split} reply names. */
    void learnedSplit(String account, List<Object> reply) {
        buckets.learned(account, Buckets.splitOf(reply));
    }

    /** The outcome an unsplit deduction's reply (not split, draining or moved) says. */
    Outcome outcome(List<Object> reply, String account, long token) {
        return Replies.outcome(reply, account, layout.markerOf(account), token);
    }

    /** Whether a reply of {@link #sendPricedOn} is a request record of the account already there (a retry). */
    static boolean isRecorded(List<Object> reply) {
        return reply != null && reply.size() == 2 && "recorded".equals(reply.get(0));
    }

    /** The first answer a {@code recorded} reply of {@link #sendPricedOn} holds, as {@link #recorded} reads it. */
    static Outcome recordedReply(List<Object> reply, String account) {
        String record = reply.get(1) instanceof String s ? s : null;
        return recorded(record, account).orElseThrow(() -> new QuotaException(Reason.PROTOCOL,
                "unexpected script reply " + reply));
    }

    /** Whether a reply of {@link #sendPricedOn} says the balance was not the one priced on. */
    static boolean isMoved(List<Object> reply) {
        return reply != null && !reply.isEmpty() && "moved".equals(reply.get(0));
    }

    private CompletableFuture<List<Object>> raw(RedisConnection via, String account, long amount, String requestId, long token,
                                                String pricedOn) {
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.requestKey(account, requestId),
                layout.journal(p)};
        return scripts.run(via, Scripts.of(Scripts.Script.DEDUCT), keys, account, Long.toString(amount), requestId,
                token < 0 ? NO_TOKEN : Long.toString(token), retentionMillis, layout.markerValue(), pricedOn);
    }

    /**
     * Sends, without waiting, the read of what an earlier change with this request id left in the account's
     * idempotency record, where a change with it would go now (the bucket it routes to, for a split account the
     * engine knows as split). A charge sends it beside its balance read (one round trip for both) and asks
     * {@link #recorded(RecordRead)} before it prices, so its retry answers as the first charge did. The key is
     * chosen now, by what the split cache says now.
     */
    RecordRead sendRecordRead(String account, String requestId) {
        Integer n = buckets.cached(account);
        String key = n != null && n > 1 ? layout.bucketRequestKey(account, Buckets.route(requestId, n), requestId)
                : layout.requestKey(account, requestId);
        return new RecordRead(account, requestId, n, commands.async().get(key).toCompletableFuture());
    }

    /**
     * The answer of a read {@link #sendRecordRead} sent: a deduction's {@link Outcome.Duplicate}, another kind's
     * {@link Outcome.Conflict}; empty when none. When the split cache changed since it was sent (the
     * balance read in between learned that the account is split), the read went to a key a read sent now would
     * not read, and it is made again.
     */
    Optional<Outcome> recorded(RecordRead read) {
        String account = read.account();
        if (!Objects.equals(buckets.cached(account), read.splitAtSend())) {
            read.reply().cancel(false);
            return recorded(sendRecordRead(account, read.requestId()));
        }
        String record = Errors.await(read.reply(), syncWaitNanos, endpoint,
                "read the record of request " + read.requestId() + " of " + account);
        return recorded(record, account);
    }

    /** What an idempotency record's text says: as {@link #recorded(RecordRead)}; empty for none or another account's. */
    static Optional<Outcome> recorded(String record, String account) {
        if (record == null) {
            return Optional.empty();
        }
        // kind|amount|balance|entry|account, as the scripts write it (the account last: it may hold '|').
        String[] f = record.split("\\|", 5);
        if (f.length < 5 || !f[4].equals(account)) {
            return Optional.empty();
        }
        EntryKind kind = EntryKind.fromWireName(f[0]);
        if (kind == EntryKind.DEDUCT) {
            return Optional.of(new Outcome.Duplicate(new Outcome.Applied(Long.parseLong(f[2]), f[3])));
        }
        return Optional.of(new Outcome.Conflict(kind, account, Long.parseLong(f[1])));
    }

    /** A read of an idempotency record on the wire: the key was chosen with {@code splitAtSend} cached. */
    record RecordRead(String account, String requestId, Integer splitAtSend, CompletableFuture<String> reply) {
    }

    /** Stops the split-routing pool once what it holds has run. */
    @Override
    public void close() {
        splitRouting.shutdown();
    }
}
