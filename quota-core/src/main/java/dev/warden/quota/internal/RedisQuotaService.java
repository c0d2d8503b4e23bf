package dev.warden.quota.internal;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.quota.Amount;
import dev.warden.quota.AmountProblem;
import dev.warden.quota.Deduction;
import dev.warden.quota.EntryKind;
import dev.warden.quota.HoldOutcome;
import dev.warden.quota.InvalidIdException;
import dev.warden.quota.InvalidIdException.Field;
import dev.warden.quota.Outcome;
import dev.warden.quota.PostingOutcome;
import dev.warden.quota.Pricing;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaListener;
import dev.warden.quota.QuotaService;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.spi.Ids;
import dev.warden.quota.spi.KeyLayout;
import dev.warden.quota.spi.QuotaConfig;
import dev.warden.quota.spi.RedisRefusal;
import dev.warden.quota.spi.RedisConnection;
import dev.warden.quota.spi.RedisConnector;
import dev.warden.quota.spi.ScriptRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The service on Lettuce: connections from the {@link RedisConnector} (one server, Sentinel or
 * Cluster), one auto-flushing connection for single calls and script loads, and one manually flushed
 * connection for batches, so a batch leaves in one write (one per primary on a Cluster).
 *
 * <p>Thread-safe: the batch connection is guarded by {@code batchLock}; the rest is immutable or atomic.
 */
final class RedisQuotaService implements QuotaService {

    private static final Logger log = LoggerFactory.getLogger(RedisQuotaService.class);

    private static final String NO_TOKEN = "-";

    private final QuotaConfig config;
    private final KeyLayout layout;
    private final RedisConnector connector;
    private final String endpoint;
    private final RedisConnection commands;
    private final RedisConnection batchCommands;
    private final ReentrantLock batchLock = new ReentrantLock();
    private final ScriptRunner scripts;
    /** Split accounts' deductions in flight at once on the asynchronous paths; more wait in line. */
    private static final int SPLIT_ROUTING_THREADS = 16;
    private final Executor completions;
    /**
     * Runs split accounts' deductions, which wait on several calls in turn: never Lettuce's I/O or
     * event-executor threads, which they would block. Bounded; idle threads end.
     */
    private final java.util.concurrent.ThreadPoolExecutor splitRouting;
    private final LockClient locks;
    private final QuotaListener listener;
    private final String retentionMillis;
    private final long syncWaitNanos;
    private final Holds holds;
    private final Postings postings;
    private final Buckets buckets;
    private final AtomicBoolean closed = new AtomicBoolean();

    private RedisQuotaService(QuotaConfig config, RedisConnector connector, RedisConnection connection,
                              RedisConnection batchConnection, LockClient locks, QuotaListener listener, Clock clock) {
        this.config = config;
        this.layout = config.layout();
        this.connector = connector;
        this.endpoint = connector.endpoint();
        this.commands = connection;
        this.batchCommands = batchConnection;
        this.scripts = new ScriptRunner(connection, config.requestTimeout());
        this.completions = connector.executors();
        this.splitRouting = new java.util.concurrent.ThreadPoolExecutor(SPLIT_ROUTING_THREADS, SPLIT_ROUTING_THREADS,
                30, TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), runnable -> {
                    Thread t = new Thread(runnable, "warden-quota-split");
                    t.setDaemon(true);
                    return t;
                });
        this.splitRouting.allowCoreThreadTimeOut(true);
        this.locks = locks;
        this.listener = listener;
        this.retentionMillis = Long.toString(config.idempotencyRetention().toMillis());
        // A call sends a refused script again until the request timeout; the last try is bounded by it too.
        this.syncWaitNanos = config.requestTimeout().multipliedBy(3).plusSeconds(1).toNanos();
        this.holds = new Holds(layout, scripts, connection, config.idempotencyRetention(), clock);
        this.postings = new Postings(layout, scripts, connection, config.idempotencyRetention());
        this.buckets = new Buckets(layout, scripts, connection, config.idempotencyRetention(), endpoint, syncWaitNanos);
    }

    static RedisQuotaService open(QuotaConfig config, QuotaListener listener, Clock clock) {
        RedisConnector connector = RedisConnector.create(config);
        String endpoint = connector.endpoint();
        LockClient locks = null;
        try {
            long deadline = System.nanoTime() + config.connectTimeout().toNanos();
            RedisConnection connection = connector.connectAsync().get(left(deadline), TimeUnit.NANOSECONDS);
            RedisConnection batch = connector.connectAsync().get(left(deadline), TimeUnit.NANOSECONDS);
            batch.setAutoFlushCommands(false);
            connector.checkEvictionPolicy(connection);
            new ScriptRunner(connection, config.requestTimeout()).loadAll(Scripts.all()).get(left(deadline), TimeUnit.NANOSECONDS);
            locks = createLocks(config);
            return new RedisQuotaService(config, connector, connection, batch, locks, listener, clock);
        } catch (InterruptedException e) {
            shutdown(connector, locks);
            throw QuotaException.interrupted("interrupted while connecting to Redis at " + endpoint, e);
        } catch (TimeoutException e) {
            shutdown(connector, locks);
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint + " and load the"
                    + " scripts within " + config.connectTimeout().toMillis() + " ms", e);
        } catch (QuotaException e) {
            shutdown(connector, locks);
            throw e;
        } catch (ExecutionException | RuntimeException e) {
            shutdown(connector, locks);
            Throwable cause = Errors.unwrap(e);
            if (cause instanceof QuotaException q) {
                throw q;
            }
            String refusal = RedisRefusal.of(cause);
            if (refusal != null) {
                throw RedisRefusal.accessDenied(endpoint, "the connection", refusal, cause);
            }
            String tls = RedisRefusal.tlsHint(cause);
            throw new QuotaException(Reason.UNAVAILABLE, "could not connect to Redis at " + endpoint
                    + (tls.isEmpty() ? " and load the scripts (Redis 7 or later is needed): " + cause.getMessage()
                    : ": " + cause.getMessage() + tls), cause);
        }
    }

    private static LockClient createLocks(QuotaConfig config) {
        if (config.lock() == QuotaConfig.LockChoice.NONE) {
            return null;
        }
        try {
            return LockClient.create(config.lockSettings());
        } catch (LockException e) {
            Reason reason = switch (e.reason()) {
                case CONFIGURATION, NO_PROVIDER, AMBIGUOUS_PROVIDER -> Reason.CONFIGURATION;
                case INTERRUPTED -> Reason.INTERRUPTED;
                default -> Reason.LOCK_FAILED;
            };
            throw new QuotaException(reason, "cannot create the " + config.lock().wireName() + " lock client for"
                    + " charges: " + e.getMessage(), e);
        }
    }

    // ---- operations ----

    @Override
    public Outcome open(String account, long initialQuota) {
        Ids.check(Field.ACCOUNT, account);
        checkOpen();
        if (initialQuota != 0) {
            Optional<AmountProblem> problem = Amount.problem(initialQuota);
            if (problem.isPresent()) {
                return new Outcome.InvalidAmount(problem.get());
            }
        }
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.journal(p)};
        Outcome opened = await(decode(scripts.run(commands, Scripts.of(Scripts.Script.OPEN), keys, account,
                Long.toString(initialQuota), layout.markerValue()), account, -1), "open " + account);
        if (opened instanceof Outcome.AccountExists) {
            // The account key holds only bucket 0 of a split account: answer with what balance() sums.
            return new Outcome.AccountExists(balance(account).orElse(((Outcome.AccountExists) opened).balance()));
        }
        return opened;
    }

    @Override
    public Outcome topUp(String account, long amount, String requestId) {
        return credit(EntryKind.TOPUP, account, amount, requestId);
    }

    @Override
    public Outcome refund(String account, long amount, String requestId) {
        return credit(EntryKind.REFUND, account, amount, requestId);
    }

    private Outcome credit(EntryKind kind, String account, long amount, String requestId) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.REQUEST, requestId);
        checkOpen();
        Optional<AmountProblem> problem = Amount.problem(amount);
        if (problem.isPresent()) {
            return new Outcome.InvalidAmount(problem.get());
        }
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.requestKey(account, requestId),
                layout.journal(p)};
        return routed(account, kind, amount, requestId, -1, () -> scripts.run(commands, Scripts.of(Scripts.Script.CREDIT),
                keys, account, Long.toString(amount), requestId, kind.wireName(), retentionMillis, layout.markerValue()),
                kind.wireName() + " " + account);
    }

    /**
     * A change on the caller's thread: to the buckets when the account is known to be split, else the unsplit
     * script, whose answer may be that the account is split (then to the buckets).
     */
    private Outcome routed(String account, EntryKind kind, long amount, String requestId, long token,
                           java.util.function.Supplier<CompletableFuture<List<Object>>> unsplit, String what) {
        for (int attempt = 0; attempt < 16; attempt++) {
            Integer n = buckets.cached(account);
            if (n != null) {
                Outcome outcome = buckets.change(account, kind, amount, requestId, token, n);
                if (outcome != null) {
                    return outcome;
                }
            }
            List<Object> reply = await(unsplit.get(), what);
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

    @Override
    public Outcome deduct(String account, long amount, String requestId) {
        return deductNow(account, amount, requestId, null);
    }

    @Override
    public Outcome deduct(String account, long amount, String requestId, Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return deductNow(account, amount, requestId, lease);
    }

    private Outcome deductNow(String account, long amount, String requestId, Lease lease) {
        long token = prepareDeduct(account, requestId, lease);
        Optional<AmountProblem> problem = Amount.problem(amount);
        if (problem.isPresent()) {
            return new Outcome.InvalidAmount(problem.get());
        }
        return routed(account, EntryKind.DEDUCT, amount, requestId, token,
                () -> rawDeduct(commands, account, amount, requestId, token), "deduct " + account);
    }

    @Override
    public CompletionStage<Outcome> deductAsync(String account, long amount, String requestId) {
        return onOurThreads(deductCall(commands, account, amount, requestId, null), "deduct " + account);
    }

    @Override
    public CompletionStage<Outcome> deductAsync(String account, long amount, String requestId, Lease lease) {
        Objects.requireNonNull(lease, "lease");
        return onOurThreads(deductCall(commands, account, amount, requestId, lease), "deduct " + account);
    }

    @Override
    public List<Outcome> deductAll(List<Deduction> deductions) {
        Objects.requireNonNull(deductions, "deductions");
        for (int i = 0; i < deductions.size(); i++) {
            Deduction d = Objects.requireNonNull(deductions.get(i), "deduction " + i);
            try {
                Ids.check(Field.ACCOUNT, d.account());
                Ids.check(Field.REQUEST, d.requestId());
            } catch (InvalidIdException e) {
                throw new InvalidIdException(e.field(), e.problem(), "deduction " + i + " of the batch: " + e.getMessage());
            }
        }
        checkOpen();
        List<CompletableFuture<Outcome>> calls = new ArrayList<>(deductions.size());
        batchLock.lock();
        try {
            for (Deduction d : deductions) {
                calls.add(deductCall(batchCommands, d.account(), d.amount(), d.requestId(), null));
            }
        } finally {
            // Flushed even when dispatch failed half-way, so nothing lingers into the next batch.
            batchCommands.flushCommands();
            batchLock.unlock();
        }
        List<Outcome> outcomes = new ArrayList<>(calls.size());
        RuntimeException failure = null;
        for (int i = 0; i < calls.size(); i++) {
            try {
                outcomes.add(await(calls.get(i), "deduction " + i + " of a batch"));
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else if (failure != e) {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return outcomes;
    }

    @Override
    public OptionalLong balance(String account) {
        Ids.check(Field.ACCOUNT, account);
        checkOpen();
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account)};
        String marker = layout.marker(p);
        List<Object> reply = await(scripts.run(commands, Scripts.of(Scripts.Script.BALANCE), keys, account,
                layout.markerValue()), "read the balance of " + account);
        if (Buckets.isSplit(reply)) {
            return buckets.balance(account);
        }
        return Replies.balance(reply, account, marker);
    }

    // ---- split accounts (Buckets') ----

    @Override
    public SplitOutcome split(String account, int count) {
        Ids.check(Field.ACCOUNT, account);
        if (count < 2 || count > MAX_BUCKETS) {
            throw new IllegalArgumentException("an account splits into 2.." + MAX_BUCKETS + " buckets, not " + count);
        }
        checkOpen();
        return buckets.split(account, count);
    }

    @Override
    public SplitOutcome merge(String account) {
        Ids.check(Field.ACCOUNT, account);
        checkOpen();
        return buckets.merge(account);
    }

    @Override
    public Outcome charge(String account, String requestId, Pricing pricing) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.REQUEST, requestId);
        Objects.requireNonNull(pricing, "pricing");
        checkOpen();
        return underLock(account, requestId, lease -> {
            OptionalLong balance = balance(account);
            if (balance.isEmpty()) {
                return new Outcome.AccountNotFound(account);
            }
            return deduct(account, pricing.price(balance.getAsLong()), requestId, lease);
        }, () -> chargeUnlocked(account, requestId, pricing));
    }

    @Override
    public HoldOutcome chargeHold(String account, String holdId, Pricing pricing) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.HOLD, holdId);
        Objects.requireNonNull(pricing, "pricing");
        checkOpen();
        // The hold's one-way state (held -> captured) guards the money; the lock orders pricing and capture.
        java.util.function.Supplier<HoldOutcome> charge = () -> {
            // Priced on the caller's thread, never on the connection's event loop.
            Optional<Long> amount = holds.amountToCapture(await(holds.read(account, holdId), "read a hold of " + account),
                    account, holdId, pricing);
            if (amount.isEmpty()) {
                return new HoldOutcome.UnknownHold(holdId);
            }
            return await(holds.capture(account, holdId, amount.get()), "capture a hold of " + account);
        };
        return underLock(account, holdId, lease -> charge.get(), charge);
    }

    /**
     * Runs {@code locked} under the account's lease, or {@code unlocked} without a lock configured or,
     * when the lock backend fails and {@code lock-unavailable=proceed}, after telling the listener.
     */
    private <T> T underLock(String account, String requestId, java.util.function.Function<Lease, T> locked,
                            java.util.function.Supplier<T> unlocked) {
        if (locks == null) {
            return unlocked.get();
        }
        Lease lease;
        try {
            lease = acquire(account);
        } catch (QuotaException e) {
            if (e.reason() != Reason.LOCK_FAILED || config.lockUnavailable() != QuotaConfig.LockUnavailable.PROCEED) {
                throw e;
            }
            // The script's balance check is the guard that keeps money right; the lock only orders the steps.
            log.warn("the lock backend failed ({}); charging account {} without its lock, as"
                    + " warden.quota.lock-unavailable=proceed says", e.getMessage(), account);
            try {
                listener.chargedWithoutLock(account, requestId, e);
            } catch (RuntimeException hookFailed) {
                log.warn("a quota listener failed", hookFailed);
            }
            return unlocked.get();
        }
        try {
            return locked.apply(lease);
        } finally {
            try {
                lease.release();
            } catch (LockException e) {
                log.warn("could not release the lock of account {} after a charge; it expires after its TTL", account, e);
            }
        }
    }

    private Outcome chargeUnlocked(String account, String requestId, Pricing pricing) {
        OptionalLong balance = balance(account);
        if (balance.isEmpty()) {
            return new Outcome.AccountNotFound(account);
        }
        return deduct(account, pricing.price(balance.getAsLong()), requestId);
    }

    private Lease acquire(String account) {
        DistributedLock lock = locks.lock(lockName(account));
        Optional<Lease> lease;
        try {
            lease = lock.tryAcquire(config.lockWait());
        } catch (LockException e) {
            if (e.reason() == LockException.Reason.INTERRUPTED) {
                throw new QuotaException(Reason.INTERRUPTED, "interrupted while waiting for the lock of account " + account, e);
            }
            throw new QuotaException(Reason.LOCK_FAILED, "could not take the lock of account " + account + ": "
                    + e.getMessage(), e);
        }
        return lease.orElseThrow(() -> new QuotaException(Reason.LOCK_TIMEOUT, "the lock of account " + account
                + " was not free within " + config.lockWait().toMillis() + " ms"));
    }

    // ---- holds (the script and its replies are Holds') ----

    @Override
    public HoldOutcome hold(String account, long amount, String holdId, Duration expiry) {
        checkOpen();
        return await(holds.hold(account, amount, holdId, expiry), "hold quota of " + account);
    }

    @Override
    public HoldOutcome capture(String account, String holdId, long amount) {
        checkOpen();
        return await(holds.capture(account, holdId, amount), "capture a hold of " + account);
    }

    @Override
    public HoldOutcome release(String account, String holdId) {
        checkOpen();
        return await(holds.release(account, holdId), "release a hold of " + account);
    }

    @Override
    public long expireHolds() {
        checkOpen();
        long expired = 0;
        for (int p = 0; p < layout.partitions(); p++) {
            long[] swept;
            do {
                swept = await(holds.sweep(p), "expire the holds of partition " + p);
                expired += swept[0];
            } while (swept[1] == 1);
        }
        return expired;
    }

    // ---- named balances (the scripts and their replies are Postings') ----

    @Override
    public PostingOutcome openBalance(String account, String balance) {
        checkOpen();
        return await(postings.open(account, balance), "open a balance of " + account);
    }

    @Override
    public PostingOutcome post(String account, String requestId, Map<String, Long> deltas) {
        checkOpen();
        return await(postings.post(account, requestId, deltas), "post to " + account);
    }

    @Override
    public Optional<SortedMap<String, Long>> balances(String account) {
        checkOpen();
        return await(postings.read(account), "read the named balances of " + account);
    }

    @Override
    public String lockName(String account) {
        Ids.check(Field.ACCOUNT, account);
        return "quota:" + account;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        splitRouting.shutdown();
        shutdown(connector, locks);
    }

    @Override
    public String toString() {
        return "QuotaService[" + endpoint + (layout.namespace().isEmpty() ? "" : ", namespace=" + layout.namespace())
                + ", partitions=" + layout.partitions() + ", lock=" + config.lock().wireName() + "]";
    }

    // ---- plumbing ----

    private CompletableFuture<Outcome> deductCall(RedisConnection via, String account, long amount,
                                                  String requestId, Lease lease) {
        long token = prepareDeduct(account, requestId, lease);
        Optional<AmountProblem> problem = Amount.problem(amount);
        if (problem.isPresent()) {
            return CompletableFuture.completedFuture(new Outcome.InvalidAmount(problem.get()));
        }
        if (buckets.cached(account) != null) {
            // A split account's deduction may take several calls: it runs on a Warden thread.
            return CompletableFuture.supplyAsync(() -> routed(account, EntryKind.DEDUCT, amount, requestId, token,
                    () -> rawDeduct(commands, account, amount, requestId, token), "deduct " + account), splitRouting);
        }
        String marker = layout.markerOf(account);
        return rawDeduct(via, account, amount, requestId, token).thenCompose(reply -> {
            if (Buckets.isDraining(reply)) {
                return CompletableFuture.supplyAsync(() -> routed(account, EntryKind.DEDUCT, amount, requestId, token,
                        () -> rawDeduct(commands, account, amount, requestId, token), "deduct " + account), splitRouting);
            }
            if (!Buckets.isSplit(reply)) {
                return CompletableFuture.completedFuture(Replies.outcome(reply, account, marker, token));
            }
            buckets.learned(account, Buckets.splitOf(reply));
            return CompletableFuture.supplyAsync(() -> routed(account, EntryKind.DEDUCT, amount, requestId, token,
                    () -> rawDeduct(commands, account, amount, requestId, token), "deduct " + account), splitRouting);
        });
    }

    /** Checks the ids and the lease; the fencing token, or -1 without a lease. */
    private long prepareDeduct(String account, String requestId, Lease lease) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.REQUEST, requestId);
        checkOpen();
        if (lease == null) {
            return -1;
        }
        if (!lease.name().equals(lockName(account))) {
            throw new IllegalArgumentException("a lease of lock '" + lease.name() + "' cannot fence account '"
                    + account + "': its lock is '" + lockName(account) + "'");
        }
        if (!lease.isValid()) {
            throw new QuotaException(Reason.LEASE_INVALID, "the lease of '" + lease.name() + "' (token "
                    + lease.fencingToken() + ") is no longer valid; nothing was sent");
        }
        long token = lease.fencingToken();
        if (token < 0) {
            throw new IllegalArgumentException("fencing token " + token + " is negative");
        }
        return token;
    }

    private CompletableFuture<List<Object>> rawDeduct(RedisConnection via, String account, long amount, String requestId,
                                                      long token) {
        int p = layout.partition(account);
        String[] keys = {layout.marker(p), layout.accountKey(account), layout.requestKey(account, requestId),
                layout.journal(p)};
        return scripts.run(via, Scripts.of(Scripts.Script.DEDUCT), keys, account, Long.toString(amount), requestId,
                token < 0 ? NO_TOKEN : Long.toString(token), retentionMillis, layout.markerValue());
    }

    private CompletableFuture<Outcome> decode(CompletableFuture<List<Object>> call, String account, long token) {
        String marker = layout.markerOf(account);
        return call.thenApply(reply -> Replies.outcome(reply, account, marker, token));
    }

    /** Completes on the client's event executors, never on a Netty I/O thread; errors translated. */
    private <T> CompletionStage<T> onOurThreads(CompletableFuture<T> call, String what) {
        CompletableFuture<T> result = new CompletableFuture<>();
        call.whenComplete((value, error) -> {
            Runnable complete = () -> {
                if (error == null) {
                    result.complete(value);
                } else {
                    result.completeExceptionally(Errors.translate(endpoint, what, error));
                }
            };
            try {
                completions.execute(complete);
            } catch (RuntimeException rejected) {
                complete.run();
            }
        });
        return result;
    }

    private <T> T await(CompletableFuture<T> call, String what) {
        return Errors.await(call, syncWaitNanos, endpoint, what);
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new QuotaException(Reason.CLOSED, "the quota service for " + endpoint + " is closed");
        }
    }

    private static long left(long deadline) {
        return Math.max(0, deadline - System.nanoTime());
    }

    private static void shutdown(RedisConnector connector, LockClient locks) {
        if (locks != null) {
            try {
                locks.close();
            } catch (RuntimeException e) {
                log.warn("closing the lock client failed", e);
            }
        }
        connector.close();
    }
}
