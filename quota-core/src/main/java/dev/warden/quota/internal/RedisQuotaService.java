package dev.warden.quota.internal;

import dev.warden.lock.Lease;
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
import dev.warden.quota.QuotaService;
import dev.warden.quota.SplitOutcome;
import dev.warden.quota.redis.Ids;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.QuotaConfig;
import dev.warden.quota.redis.RedisConnection;
import dev.warden.quota.redis.RedisConnector;
import dev.warden.quota.redis.ScriptRunner;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The service on Lettuce: connections from the {@link RedisConnector} (one server, Sentinel or
 * Cluster), one auto-flushing connection for single calls and script loads, and one manually flushed
 * connection for batches ({@link DeductionBatches}), so a batch leaves in one write (one per primary on a
 * Cluster). It checks arguments and hands each operation to the class that owns its protocol:
 * {@link Deductions} (the deduct and credit scripts, and a split account's routing), {@link Buckets},
 * {@link SplitLifecycle}, {@link Holds}, {@link Postings}; {@link Charges} run under {@link AccountLocks}'
 * policy. {@link QuotaFactory} opens it.
 *
 * <p>Thread-safe: immutable or atomic (the batch connection is {@link DeductionBatches}', which guards it).
 */
final class RedisQuotaService implements QuotaService {

    private final QuotaConfig config;
    private final KeyLayout layout;
    private final RedisConnector connector;
    private final String endpoint;
    private final RedisConnection commands;
    private final ScriptRunner scripts;
    private final Executor completions;
    private final AccountLocks locks;
    private final long syncWaitNanos;
    private final Deductions deductions;
    private final Holds holds;
    private final Postings postings;
    private final Buckets buckets;
    private final SplitLifecycle splits;
    private final Charges charges;
    private final ChargeThreads chargeThreads;
    private final DeductionBatches batches;
    private final RedisConnection batchConnection;
    /** Whether closing this service closes the connector (its own) or only its two connections (a borrowed one). */
    private final boolean ownsConnector;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Over connections and a lock client already opened (see {@link QuotaFactory}); closes them when closed,
     * and the connector too when it is the service's own.
     */
    RedisQuotaService(QuotaConfig config, RedisConnector connector, boolean ownsConnector, RedisConnection connection,
                      RedisConnection batchConnection, AccountLocks locks, Clock clock) {
        this.config = config;
        this.ownsConnector = ownsConnector;
        this.batchConnection = batchConnection;
        this.layout = config.layout();
        this.connector = connector;
        this.endpoint = connector.endpoint();
        this.commands = connection;
        this.scripts = new ScriptRunner(connection, config.requestTimeout());
        this.completions = connector.executors();
        this.locks = locks;
        // A call sends a refused script again until the request timeout; the last try is bounded by it too.
        this.syncWaitNanos = config.requestTimeout().multipliedBy(3).plusSeconds(1).toNanos();
        this.holds = new Holds(layout, scripts, connection, config.idempotencyRetention(), clock);
        this.postings = new Postings(layout, scripts, connection, config.idempotencyRetention());
        BucketScript bucketScript = new BucketScript(layout, scripts, connection, endpoint, syncWaitNanos);
        BucketMoves moves = new BucketMoves(layout, bucketScript, config.idempotencyRetention());
        this.buckets = new Buckets(layout, connection, bucketScript, moves, config.idempotencyRetention());
        this.splits = new SplitLifecycle(layout, connection, bucketScript, moves, buckets);
        this.deductions = new Deductions(layout, scripts, connection, buckets, config.idempotencyRetention(), syncWaitNanos,
                endpoint);
        this.chargeThreads = new ChargeThreads(config.chargeThreads());
        this.charges = new Charges(this, locks, deductions, holds, syncWaitNanos, endpoint, config.combineCharges(),
                chargeThreads, completions);
        this.batches = new DeductionBatches(batchConnection, syncWaitNanos, endpoint);
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
        return deductions.credit(kind, account, amount, requestId);
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
        return deductions.deduct(account, amount, requestId, token);
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
        return batches.deductAll(deductions, (via, d) -> deductCall(via, d.account(), d.amount(), d.requestId(), null));
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

    // ---- split accounts (Buckets' and SplitLifecycle's) ----

    @Override
    public Outcome open(String account, long initialQuota, int count) {
        checkBuckets(count); // before the opening, so a refused split opens nothing
        return QuotaService.super.open(account, initialQuota, count);
    }

    @Override
    public SplitOutcome split(String account, int count) {
        Ids.check(Field.ACCOUNT, account);
        checkBuckets(count);
        checkOpen();
        return splits.split(account, count);
    }

    /** 2..64 buckets, each in a partition of its own (bucket i lives in partition (home + i) mod partitions). */
    private void checkBuckets(int count) {
        if (count < 2 || count > MAX_BUCKETS) {
            throw new IllegalArgumentException("an account splits into 2.." + MAX_BUCKETS + " buckets, not " + count);
        }
        if (count > layout.partitions()) {
            throw new IllegalArgumentException("an account splits into at most as many buckets as there are partitions ("
                    + layout.partitions() + "), not " + count + ": two buckets in one partition would share its keys");
        }
    }

    @Override
    public SplitOutcome merge(String account) {
        Ids.check(Field.ACCOUNT, account);
        checkOpen();
        return splits.merge(account);
    }

    @Override
    public Outcome charge(String account, String requestId, Pricing pricing) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.REQUEST, requestId);
        Objects.requireNonNull(pricing, "pricing");
        checkOpen();
        return charges.charge(account, requestId, pricing);
    }

    @Override
    public CompletionStage<Outcome> chargeAsync(String account, String requestId, Pricing pricing) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.REQUEST, requestId);
        Objects.requireNonNull(pricing, "pricing");
        checkOpen();
        return charges.chargeAsync(account, requestId, pricing);
    }

    @Override
    public HoldOutcome chargeHold(String account, String holdId, Pricing pricing) {
        Ids.check(Field.ACCOUNT, account);
        Ids.check(Field.HOLD, holdId);
        Objects.requireNonNull(pricing, "pricing");
        checkOpen();
        return charges.chargeHold(account, holdId, pricing);
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
        return AccountLocks.lockName(account);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        chargeThreads.close(); // first: the charges not started are answered CLOSED, the running ones interrupted
        deductions.close();
        locks.close();
        if (ownsConnector) {
            connector.close();
        } else {
            connector.disconnect(commands);
            connector.disconnect(batchConnection);
        }
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
        return deductions.deductAsync(via, account, amount, requestId, token);
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

    private CompletableFuture<Outcome> decode(CompletableFuture<List<Object>> call, String account, long token) {
        String marker = layout.markerOf(account);
        return call.thenApply(reply -> Replies.outcome(reply, account, marker, token));
    }

    /** Completes on the client's event executors, never on a Netty I/O thread; errors translated. */
    private <T> CompletionStage<T> onOurThreads(CompletableFuture<T> call, String what) {
        return Errors.completeOn(completions, call, endpoint, what);
    }

    private <T> T await(CompletableFuture<T> call, String what) {
        return Errors.await(call, syncWaitNanos, endpoint, what);
    }

    private void checkOpen() {
        if (closed.get()) {
            throw new QuotaException(Reason.CLOSED, "the quota service for " + endpoint + " is closed");
        }
    }
}
