package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.TxnResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The etcd driver: one gRPC channel ({@link Calls}), one session (lease) at a time, and the queue
 * algorithm of {@link EtcdAttempt}; shared names (semaphores, read-write locks) are {@link SharedLocks}'s,
 * dispatched to by the grant's class. The threads, the channel and the session, from open to close,
 * are {@link Lifecycle}'s; this class renews and releases grants and dispatches the rest (a kept
 * lock's contender watch is {@link ContenderWatches}'s). See {@code EtcdLockProvider} for the model.
 *
 * <p>Concurrency: every field is final; the session's state and {@code closed} are guarded in
 * {@link Lifecycle}; the attempt counter is atomic, the channel thread-safe.
 */
public final class EtcdDriver implements TokenFloorDriver, LeaseCachingDriver, EpochRecordingDriver, HolderEvictingDriver,
        HolderListingDriver, SharedLockDriver {

    private static final Logger log = LoggerFactory.getLogger(EtcdDriver.class);
    /** Combined write transactions on their way at once; more wait and go together ({@link TxnCombiner}). */
    private static final int WRITES_ON_THEIR_WAY = 2;

    private final LockConfig config;
    private final Lifecycle lifecycle;
    private final Calls calls;
    private final TxnCombiner writes;
    private final String clientId = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    private final AtomicLong attempts = new AtomicLong();
    private final SharedLocks shared = new SharedLocks(this);

    private EtcdDriver(LockConfig config) {
        this.config = config;
        this.lifecycle = new Lifecycle(config);
        this.calls = lifecycle.calls();
        this.writes = new TxnCombiner(calls, config.requestTimeout(), WRITES_ON_THEIR_WAY);
    }

    /** Connects and takes the first lease, so a wrong endpoint or TTL fails here rather than at the first lock. */
    public static EtcdDriver open(LockConfig config) {
        EtcdDriver driver = new EtcdDriver(config);
        Throwable connectFailure = null;
        try {
            // Connected (or failed) within the connect timeout; a TLS handshake refused fails at once.
            connectFailure = driver.calls.awaitConnected(config.connectTimeout());
            if (connectFailure != null) {
                driver.close();
                throw new LockException(LockException.Reason.UNAVAILABLE, "cannot reach etcd at "
                        + Redaction.redact(String.valueOf(config.endpoints())) + " within " + config.connectTimeout().toMillis()
                        + " ms" + lastConnectionFailure(connectFailure, driver.calls.tls()), connectFailure);
            }
            // Authenticating (with a user) and the first lease grant: generous, as the first call was before.
            Duration first = config.connectTimeout().plus(config.requestTimeout());
            CompletableFuture<Session> opened = driver.lifecycle.first(first);
            opened.get(first.toNanos() + TimeUnit.MILLISECONDS.toNanos(100), TimeUnit.NANOSECONDS);
            return driver;
        } catch (ExecutionException e) {
            driver.close();
            Throwable cause = EtcdErrors.unwrap(e);
            if (cause instanceof LockException le && (le.reason() == LockException.Reason.CONFIGURATION
                    || le.reason() == LockException.Reason.ACCESS_DENIED)) {
                throw le;
            }
            throw new LockException(LockException.Reason.UNAVAILABLE, "cannot reach etcd at " + Redaction.redact(String.valueOf(config.endpoints()))
                    + " within " + config.connectTimeout().toMillis() + " ms: " + Redaction.redact(cause.getMessage())
                    + lastConnectionFailure(connectFailure, driver.calls.tls()), cause);
        } catch (TimeoutException e) {
            driver.close();
            throw new LockException(LockException.Reason.UNAVAILABLE, "cannot reach etcd at " + Redaction.redact(String.valueOf(config.endpoints()))
                    + " within " + config.connectTimeout().toMillis() + " ms" + lastConnectionFailure(connectFailure, driver.calls.tls()), e);
        } catch (LockException e) {
            driver.close();
            throw e;
        } catch (InterruptedException e) {
            driver.close();
            Thread.currentThread().interrupt();
            throw new LockException(LockException.Reason.INTERRUPTED, "interrupted while connecting to etcd", e);
        }
    }

    /** What the last failed connection said, and a hint when a plain-text client meets a TLS server. */
    private static String lastConnectionFailure(Throwable failure, boolean tls) {
        if (failure == null) {
            return "";
        }
        return "; last connection failure: " + Redaction.redact(EtcdErrors.describe(failure))
                + (tls ? "" : " (if the server expects TLS, use etcds:// endpoints and warden.lock.etcd.tls.trust-store)");
    }

    Calls calls() {
        return calls;
    }

    /** The guarded writes of the lock path (entries created, grants released), combined when they coincide. */
    TxnCombiner writes() {
        return writes;
    }

    LockConfig config() {
        return config;
    }

    boolean isClosed() {
        return lifecycle.isClosed();
    }

    /** The live session, or a new one (a new etcd lease) when there is none or it was lost. */
    CompletableFuture<Session> session() {
        return lifecycle.session();
    }

    @Override
    public void onSessionLost(Consumer<Throwable> listener) {
        lifecycle.onSessionLost(listener);
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        return attempt(name, owner, false);
    }

    /** As {@link #attempt}, for a grant the client may keep: it counts from a keep-alive sent with its poll if need be. */
    @Override
    public LockAttempt attemptKept(String name, String owner) {
        return attempt(name, owner, true);
    }

    private LockAttempt attempt(String name, String owner, boolean kept) {
        if (isClosed()) {
            throw new LockException(LockException.Reason.CLOSED, "the etcd driver is closed");
        }
        String unique = unique();
        return new EtcdAttempt(this, Keys.queuePrefix(config.namespace(), name),
                Keys.marker(config.namespace(), unique), Keys.floor(config.namespace()), owner + " " + unique, kept);
    }

    /** An attempt at a share of the shared name {@code name}, in its own queue ({@link SharedLocks}). */
    @Override
    public LockAttempt attemptShared(String name, String owner, Share share) {
        if (isClosed()) {
            throw new LockException(LockException.Reason.CLOSED, "the etcd driver is closed");
        }
        return shared.attempt(name, owner, share, unique());
    }

    /** This attempt's id, unique to the driver: it tells its entry and marker from every other attempt's. */
    private String unique() {
        return clientId + "-" + Long.toHexString(attempts.incrementAndGet());
    }

    /**
     * A keep-alive of the grant's lease and a read of its key, both sent now: still ours when the
     * lease is alive and the key exists with the granted create revision. Either alone proves
     * nothing: a key outlives nothing its lease does not, and a live lease says nothing of a key
     * deleted behind its back.
     */
    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        if (grant instanceof SharedGrant sg) {
            return shared.renew(sg, ttl);
        }
        EtcdGrant g = (EtcdGrant) grant;
        if (!g.session().isAlive()) {
            return CompletableFuture.completedFuture(false);
        }
        CompletableFuture<Void> alive = g.session().keepAliveOnce();
        CompletableFuture<Boolean> keyThere = calls.unary("a renewal read", KVGrpc.getRangeMethod(),
                Requests.get(Requests.bytes(g.key()))).thenApply(r -> r.getKvsCount() == 1
                && r.getKvs(0).getCreateRevision() == g.createRevision()
                && r.getKvs(0).getLease() == g.session().leaseId());
        return alive.handle((v, error) -> error).thenCombine(keyThere, (keepAliveError, there) -> {
            if (keepAliveError != null) {
                if (EtcdErrors.leaseNotFound(keepAliveError)) {
                    return false;
                }
                throw new CompletionException(keepAliveError);
            }
            return there;
        });
    }

    /** One transaction: the queue's oldest entry and the namespace's floor ({@link Holders}). */
    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        return Holders.read(calls, config.namespace(), name);
    }

    /** The floor and ranges over the namespace ({@link Holders#list}). */
    @Override
    public CompletionStage<List<NamedHolder>> holders(Duration limit) {
        return Holders.list(calls, config.namespace()).orTimeout(limit.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** A read as {@link #holder}, a lease for the mark, and one guarded transaction ({@link Holders}). */
    @Override
    public CompletionStage<Boolean> evict(String name, long token) {
        return Holders.evict(calls, config.namespace(), name, token, config.ttl());
    }

    @Override
    public CompletionStage<Boolean> evicted(Grant grant) {
        if (grant instanceof SharedGrant) {
            // Operators evict locks' holders only.
            return CompletableFuture.completedFuture(false);
        }
        EtcdGrant g = (EtcdGrant) grant;
        String prefix = g.key().substring(0, g.key().lastIndexOf('/') + 1);
        return Holders.evicted(calls, prefix, g.createRevision());
    }

    /** The namespace's floor, raised by {@link TokenFloor}. */
    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        if (grant instanceof SharedGrant) {
            // The migrating step, the floor's only user, offers no shared names.
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL,
                    "the token floor is raised for locks only, not for a share of a shared name"));
        }
        return TokenFloor.raise(calls, (EtcdGrant) grant, floor);
    }

    /**
     * Moves the namespace's floor to the grant's own floor plus {@code count - 1}: every later grant of the lock
     * was queued after it, so its create revision is above the grant's and its token above the reserved ones.
     * (Raising the floor to the last reserved token would add a revision to the floor at every reservation.)
     */
    @Override
    public CompletionStage<Boolean> reserveTokens(Grant grant, int count) {
        if (!(grant instanceof EtcdGrant g)) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL,
                    "tokens are reserved for locks only, not for a share of a shared name"));
        }
        return TokenFloor.raiseValue(calls, g, g.floor() + count - 1);
    }

    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        return EpochRecord.record(calls, Keys.epoch(config.namespace()), epoch);
    }

    /**
     * Lease caching ({@code warden.lock.lease-cache}): one watch of the lock's queue from the grant on, which
     * reports every entry queued behind the holder ({@link ContenderWatches}). lock-api reserves the kept hold's
     * tokens through {@link #raiseTokenFloor}.
     */
    @Override
    public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
        if (isClosed()) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.CLOSED, "the etcd driver is closed"));
        }
        return ContenderWatches.start(this, name, grant, asked);
    }

    /** Deletes the key only while its create revision is the granted one; a stale retry deletes nothing. */
    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        if (grant instanceof SharedGrant sg) {
            return shared.release(sg);
        }
        EtcdGrant g = (EtcdGrant) grant;
        CompletableFuture<Boolean> done = guardedDelete(g.key(), g.createRevision()).thenApply(TxnResponse::getSucceeded);
        done.whenComplete((removed, error) -> {
            if (error != null) {
                retryInBackground("release of " + g.key(), () -> guardedDelete(g.key(), g.createRevision()), g.session());
            }
        });
        return done;
    }

    CompletableFuture<TxnResponse> guardedDelete(String key, long createRevision) {
        return writes.txn("a guarded delete of " + key, Requests.guardedDelete(Requests.bytes(key), createRevision));
    }

    /**
     * Runs an attempt's clean-up (the delete of its abandoned queue entry): a failure other than a
     * lease already gone (which took the entry with it) is retried in the background and returned.
     */
    CompletableFuture<Void> cleanUp(String what, java.util.function.Supplier<CompletableFuture<?>> op, Session s) {
        return op.get().handle((r, error) -> {
            if (error != null && !EtcdErrors.leaseNotFound(error)) {
                retryInBackground(what, op, s);
                throw error instanceof CompletionException ce ? ce : new CompletionException(error);
            }
            return null;
        });
    }

    /**
     * Retries a clean-up that could not be confirmed (a release, an abandoned queue entry) until it
     * is, or until its session ends: a key on a lease we keep alive would otherwise stay forever.
     */
    void retryInBackground(String what, java.util.function.Supplier<CompletableFuture<?>> op, Session session) {
        long delay = Math.max(TimeUnit.MILLISECONDS.toNanos(200), config.requestTimeout().toNanos());
        calls.schedule(() -> {
            if (isClosed() || !session.isAlive()) {
                return;
            }
            op.get().whenComplete((r, error) -> {
                if (error != null && !EtcdErrors.leaseNotFound(error)) {
                    log.debug("{} not confirmed yet, retrying", what, error);
                    retryInBackground(what, op, session);
                }
            });
        }, delay);
    }

    /** Closes the lifecycle: no session from now on, the lease revoked, the channel and threads stopped. */
    @Override
    public void close() {
        // Before the channel goes: waiting shared attempts fail with CLOSED rather than a watch error.
        lifecycle.close(shared::close);
    }
}
