package dev.warden.quota;

import dev.warden.lock.Lease;
import dev.warden.quota.internal.QuotaFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.SortedMap;
import java.util.Properties;
import java.util.concurrent.CompletionStage;

/**
 * Quota accounts in Redis: every change is one Lua script run with {@code EVALSHA}, atomic,
 * idempotent per (account, request id), journaled to its partition's stream, and (for deductions carrying a
 * lease) fenced against superseded lock holders. Thread-safe; one instance per application.
 *
 * <p>Settings (keys outside {@code warden.quota.} and {@code warden.lock.} are ignored, so a whole
 * application {@link Properties} may be passed; unknown {@code warden.quota.} keys are errors):
 * <table>
 *   <caption>settings</caption>
 *   <tr><td>{@code warden.quota.endpoint}</td><td>required: {@code redis://host:port[/db]}</td></tr>
 *   <tr><td>{@code warden.quota.namespace}</td><td>prefix of every key ({@code <namespace>:quota:...}): tenants
 *       sharing one Redis never see each other's accounts, journals or reconciliations; letters, digits,
 *       {@code . _ -} in {@code :}-separated words; default none ({@code quota:...})</td></tr>
 *   <tr><td>{@code warden.quota.partitions}</td><td>partition count, 1..16384; default 16; fixed for the life of the data</td></tr>
 *   <tr><td>{@code warden.quota.idempotency-retention}</td><td>how long a request id is remembered; default {@code 24h}</td></tr>
 *   <tr><td>{@code warden.quota.request-timeout}</td><td>deadline of every server call; default {@code 5s}</td></tr>
 *   <tr><td>{@code warden.quota.connect-timeout}</td><td>default {@code 5s}</td></tr>
 *   <tr><td>{@code warden.quota.allow-eviction}</td><td>{@code false} (default): a server whose
 *       {@code maxmemory-policy} can evict quota keys ({@code allkeys-*}, {@code volatile-*}) is refused at start;
 *       {@code true}: it is only logged as a warning</td></tr>
 *   <tr><td>{@code warden.quota.lock}</td><td>{@code none} (default), {@code redis}, {@code etcd}, {@code zookeeper} or {@code memory} (one JVM only: tests): the lock {@link #charge} takes</td></tr>
 *   <tr><td>{@code warden.quota.lock-unavailable}</td><td>what {@link #charge} does when the lock backend fails
 *       (not when the lock is busy: that is {@link QuotaException.Reason#LOCK_TIMEOUT}): {@code fail} (default,
 *       {@link QuotaException.Reason#LOCK_FAILED}) or {@code proceed} without the lock, unfenced, guarded by the
 *       script's balance check alone, and told to {@link QuotaListener#chargedWithoutLock}</td></tr>
 *   <tr><td>{@code warden.quota.lock-wait}</td><td>how long {@link #charge} waits for the lock; default {@code 10s}</td></tr>
 *   <tr><td>{@code warden.quota.combine-charges}</td><td>{@code false} (default): one lock hold per {@link #charge};
 *       {@code true}: an account's concurrent charges in this engine share one hold and are priced in rounds, each
 *       deduction applied only to the exact balance it was priced on (pricing then runs on the combining caller's
 *       thread, and again when the balance moved)</td></tr>
 *   <tr><td>{@code warden.lock.*}</td><td>passed to {@code LockClient.create} unless the lock is {@code none};
 *       {@code warden.lock.backend} defaults to the lock setting, and for {@code redis}
 *       {@code warden.lock.endpoints} defaults to the quota endpoint</td></tr>
 * </table>
 * Durations are written {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h}, {@code 1d} or ISO-8601
 * ({@code PT30S}). Every problem in a configuration is reported in one {@link QuotaException} with
 * reason {@link QuotaException.Reason#CONFIGURATION}.
 *
 * <p><b>Idempotency is per account</b>: a request id identifies one change of one account. A
 * repeated (account, request id) within the retention answers {@link Outcome.Duplicate} (or
 * {@link Outcome.Conflict} when its kind or amount differs) and changes nothing; two accounts may use
 * the same request id independently.
 *
 * <p>Account and request ids must be valid (see {@link InvalidIdException}); an invalid id is
 * thrown at the call, before anything is sent, by the asynchronous and batch forms too. An
 * amount out of range is answered with {@link Outcome.InvalidAmount}, also before anything is sent.
 */
public interface QuotaService extends AutoCloseable {

    /** The longest account or request id, in bytes of UTF-8. */
    int MAX_ID_BYTES = 128;

    /** The longest balance name ({@link #openBalance}), in characters of {@code a-z 0-9 _ -}. */
    int MAX_BALANCE_NAME_BYTES = 32;

    /** The most buckets {@link #split} makes of one account. */
    int MAX_BUCKETS = 64;

    /** The most balances one {@link #post} may move. */
    int MAX_POSTING_LINES = 16;

    /** Connects, loads the scripts and, when configured, creates the lock client. */
    static QuotaService create(Map<String, ?> settings) {
        return QuotaFactory.create(settings);
    }

    /** Same as {@link #create(Map)}. */
    static QuotaService create(Properties properties) {
        return QuotaFactory.create(properties);
    }

    /** {@link #create(Map)}, telling {@code listener} of what the engine does beyond outcomes. */
    static QuotaService create(Map<String, ?> settings, QuotaListener listener) {
        return QuotaFactory.create(settings, listener);
    }

    /**
     * Opens an account with an initial quota (0 allowed) and journals it.
     *
     * @return {@link Outcome.Applied} or {@link Outcome.AccountExists} (nothing changed)
     */
    Outcome open(String account, long initialQuota);

    /**
     * Opens an account split into {@code buckets} buckets: {@link #open(String, long)}, then, when it applied,
     * {@link #split}. Two steps, not one: a process that dies between them leaves the account open and
     * unsplit (split it again).
     *
     * @param buckets 2..{@value #MAX_BUCKETS}
     * @return what {@link #open(String, long)} answered
     * @throws IllegalArgumentException when {@code buckets} is out of range; nothing is sent
     */
    default Outcome open(String account, long initialQuota, int buckets) {
        if (buckets < 2 || buckets > MAX_BUCKETS) {
            throw new IllegalArgumentException("an account splits into 2.." + MAX_BUCKETS + " buckets, not " + buckets);
        }
        Outcome opened = open(account, initialQuota);
        if (opened instanceof Outcome.Applied) {
            split(account, buckets);
        }
        return opened;
    }

    /** Adds quota. Idempotent per (account, request id). */
    Outcome topUp(String account, long amount, String requestId);

    /** Gives quota back (journaled as a refund). Idempotent per (account, request id). */
    Outcome refund(String account, long amount, String requestId);

    /** Deducts without a lease (no fence check). Idempotent per (account, request id). */
    Outcome deduct(String account, long amount, String requestId);

    /**
     * Deducts carrying the lease's fencing token: the script refuses it with
     * {@link Outcome.StaleFence} when the account has seen a higher token, and otherwise records
     * it as the account's high-water mark. The lease must be of {@link #lockName(String) the
     * account's lock}.
     *
     * @throws QuotaException {@link QuotaException.Reason#LEASE_INVALID} when the lease is no longer
     *         valid; nothing is sent
     * @throws IllegalArgumentException when the lease is of another lock
     */
    Outcome deduct(String account, long amount, String requestId, Lease lease);

    /** {@link #deduct(String, long, String)} without blocking; completes on a Warden thread. */
    CompletionStage<Outcome> deductAsync(String account, long amount, String requestId);

    /** {@link #deduct(String, long, String, Lease)} without blocking; completes on a Warden thread. */
    CompletionStage<Outcome> deductAsync(String account, long amount, String requestId, Lease lease);

    /**
     * Many deductions in one round trip (pipelined), each with its own outcome, in order. They are
     * independent: one's failure does not undo another.
     *
     * @throws InvalidIdException naming the first invalid id; nothing is sent
     */
    List<Outcome> deductAll(List<Deduction> deductions);

    /**
     * The balance, or empty when there is no such account.
     *
     * @throws QuotaException {@link QuotaException.Reason#DATA_LOST} when the partition's marker is gone
     */
    OptionalLong balance(String account);

    /**
     * A multi-step charge: takes the account's lock (when a lock is configured), reads the
     * balance, asks {@code pricing} for the amount, deducts it with the lease's fencing token and
     * releases the lock. Without a lock ({@code warden.quota.lock=none}) the same steps run
     * unlocked and unfenced. With {@code warden.quota.combine-charges=true}, the account's charges waiting in
     * this engine share one hold: priced in rounds, each on the balance the ones before it leave, each
     * deduction applied only to the exact balance it was priced on (else priced again); {@code pricing} then
     * runs on the thread of the caller that combines, and may run again for a charge whose balance moved.
     *
     * <p>A charge is retried with its request id (after a timeout, say): when that id already deducted from
     * this account, the retry answers {@link Outcome.Duplicate} with the first outcome and does not deduct
     * again, whatever the price would be now; when another kind of change used it, {@link Outcome.Conflict}.
     * One hold per charge does not call {@code pricing} for such a retry; combined charges may, in a round
     * priced before the records were read, and leave that price unused.
     *
     * @throws QuotaException {@link QuotaException.Reason#LOCK_TIMEOUT}, {@link QuotaException.Reason#LOCK_FAILED}
     *         (unless {@code warden.quota.lock-unavailable=proceed}), or any failure of the deduction
     */
    Outcome charge(String account, String requestId, Pricing pricing);

    /**
     * {@link #charge} without blocking the caller: the lock, the reads, {@code pricing} and the deduction run on one
     * of the engine's charge threads ({@code warden.quota.charge-threads}, named {@code warden-quota-charge-N}), and
     * the stage completes on a Warden thread that is neither the caller's nor a charge thread (so a callback that
     * charges again, even blocking, cannot wait on itself); only while the engine, or the connector it borrows, is
     * closing may it complete on the thread that answers it. A callback registered after completion runs on the
     * thread that registers it, as for any {@code CompletableFuture}. Same answers, same idempotency, same exceptions (as the
     * stage's failure). With {@code warden.quota.combine-charges=true} the account's asynchronous and blocking
     * charges wait in one queue and share the holds; a charge thread combines when no blocking caller does.
     *
     * <p>The stage fails with {@link QuotaException.Reason#CLOSED} when the service closes before the charge was
     * sent; a charge on the wire when it closes may or may not have applied, as for {@link #charge}: retry it with
     * its request id.
     *
     * @throws InvalidIdException for an invalid account or request id; nothing is queued
     * @throws QuotaException {@link QuotaException.Reason#CLOSED} when the service is closed
     */
    CompletionStage<Outcome> chargeAsync(String account, String requestId, Pricing pricing);

    /**
     * Authorisation hold: moves {@code amount} from the account's available balance to held, in one
     * script, journaled ({@link EntryKind#HOLD}). Held quota is not available to deductions or other
     * holds until it is captured, released or expires. Hold ids are unique per account, like request ids;
     * the same call again answers {@link HoldOutcome.Duplicate}.
     *
     * @param expiry how long the hold lasts on the engine's clock; then it returns to available by itself,
     *               journaled ({@link EntryKind#EXPIRE}): at the next hold call touching its partition, a
     *               capture or release of it, or {@link #expireHolds()}
     * @return {@link HoldOutcome.Held}, or what {@link HoldOutcome} lists for hold
     * @throws InvalidIdException for an invalid account or hold id
     * @throws IllegalArgumentException when {@code expiry} is under 1 ms
     */
    HoldOutcome hold(String account, long amount, String holdId, Duration expiry);

    /**
     * Captures a hold: {@code amount} (at most what is held) leaves the account, journaled
     * ({@link EntryKind#CAPTURE}), and the rest returns to available ({@link EntryKind#RELEASE}).
     * The same capture again answers {@link HoldOutcome.Duplicate}; another amount
     * {@link HoldOutcome.AlreadyCaptured}.
     */
    HoldOutcome capture(String account, String holdId, long amount);

    /** Voids a hold: all of it returns to available, journaled ({@link EntryKind#RELEASE}). */
    HoldOutcome release(String account, String holdId);

    /**
     * {@link #charge} on a hold: takes the account's lock as {@code charge} does (the same
     * {@code warden.quota.lock-unavailable} policy), reads what the hold still holds, asks
     * {@code pricing} for the amount (given the held amount, not the balance), and captures it; the
     * rest returns to available. The hold's own state, not the lock, keeps this right: a hold is
     * captured at most once, so a retry answers {@link HoldOutcome.Duplicate} and a capture that lost
     * a race with expiry answers {@link HoldOutcome.Expired}. A price above the held amount is
     * {@link HoldOutcome.ExceedsHold} and captures nothing.
     *
     * @return what {@link #capture} returns; {@link HoldOutcome.UnknownHold} when the account has no such hold,
     *         {@link HoldOutcome.AccountNotFound} when there is no such account
     * @throws QuotaException as {@link #charge}; {@link QuotaException.Reason#DATA_LOST} when the partition's marker is gone
     */
    HoldOutcome chargeHold(String account, String holdId, Pricing pricing);

    /**
     * Expires every hold whose expiry has passed on the engine's clock, in every partition, each
     * journaled ({@link EntryKind#EXPIRE}). Run it on a schedule (the ledger's consumer or any one
     * instance) so an expired hold's quota comes back even when nothing else touches its partition.
     *
     * @return how many holds it expired
     */
    long expireHolds();

    /**
     * Opens a named balance of the account at 0 (not journaled: the ledger counts a balance it has no row
     * for as 0). Named balances (plan quota, points, coupons...) sit beside the account's main balance,
     * which {@link #deduct}, {@link #topUp}, {@link #refund} and holds move and a posting never does.
     *
     * @param balance 1..{@value #MAX_BALANCE_NAME_BYTES} characters of {@code a-z}, {@code 0-9}, {@code _}, {@code -}
     * @return {@link PostingOutcome.Opened}, {@link PostingOutcome.BalanceExists} or {@link PostingOutcome.AccountNotFound}
     * @throws InvalidIdException for an invalid account id or balance name (field {@link InvalidIdException.Field#BALANCE})
     */
    PostingOutcome openBalance(String account, String balance);

    /**
     * Posts to several named balances of one account at once, in one script: a positive delta credits its
     * balance, a negative one debits it. Every line is checked (the balance is open, covers its debit, does
     * not overflow) before the first write, so a posting is applied whole or not at all, and journaled as one
     * entry ({@link EntryKind#POST}). Idempotent per (account, request id), sharing the request ids of
     * deductions: the same posting again answers {@link PostingOutcome.Duplicate}, other lines or another
     * kind of change {@link PostingOutcome.Conflict}.
     *
     * @param deltas by balance name, 1..{@value #MAX_POSTING_LINES} of them, each non-zero and at most 2^53−1
     *               either way
     * @return {@link PostingOutcome.Posted}, or what {@link PostingOutcome} lists for post
     * @throws InvalidIdException for an invalid account id, request id or balance name; nothing is sent
     */
    PostingOutcome post(String account, String requestId, Map<String, Long> deltas);

    /**
     * The account's named balances by name (the main balance is {@link #balance}); empty when there is no
     * such account.
     */
    Optional<SortedMap<String, Long>> balances(String account);

    /**
     * Splits a hot account into {@code buckets} buckets, online: bucket 0 is the account's own key, bucket
     * {@code i} lives in partition {@code (partition + i) mod partitions} (so, on a Cluster, mostly on other
     * nodes). The balance is spread evenly (bucket 0 keeps the remainder). Afterwards a deduction, top-up or
     * refund goes to the bucket its request id picks (a retry picks the same one while the split lasts);
     * a deduction its bucket cannot cover first moves quota from the other buckets, and is refused only
     * when, after a round over all of them, nothing more could be moved and its bucket still falls short.
     * A fenced deduction goes to the bucket its request id picks too (so a retry with or without the lease
     * meets the same idempotency record), after raising every bucket's fence mark to its token: a superseded
     * holder is refused ({@link Outcome.StaleFence}) in any bucket; it costs one call per bucket. The journal and the ledger
     * stay per account; {@link #balance} is the sum of the buckets. {@link Outcome.Applied#balance()} of a
     * split account's change is its bucket's balance, not the account's. Holds and postings use bucket 0.
     *
     * @param buckets 2..{@value #MAX_BUCKETS}, and at most {@code warden.quota.partitions} (each bucket in a
     *                partition of its own)
     * @return {@link SplitOutcome.Split}, {@link SplitOutcome.AlreadySplit} or {@link SplitOutcome.AccountNotFound}
     * @throws InvalidIdException for an invalid account id
     * @throws IllegalArgumentException when {@code buckets} is out of range
     */
    SplitOutcome split(String account, int buckets);

    /**
     * Merges a split account back, online: closes its buckets and moves what they hold into the account's own
     * key. Deductions running meanwhile land either in a bucket before it closes (its quota then moves too)
     * or, after, in the account's key. Re-running it completes a merge a crash interrupted.
     *
     * @return {@link SplitOutcome.Merged}, {@link SplitOutcome.NotSplit}, {@link SplitOutcome.AccountNotFound}, or
     *         {@link SplitOutcome.TooLarge} when the buckets hold more than one balance may (nothing changed)
     */
    SplitOutcome merge(String account);

    /** The lock name of an account, for callers that take the lock themselves: {@code quota:<account>}. */
    String lockName(String account);

    /** Closes the lock client (if any) and the Redis connections. Idempotent. */
    @Override
    void close();
}
