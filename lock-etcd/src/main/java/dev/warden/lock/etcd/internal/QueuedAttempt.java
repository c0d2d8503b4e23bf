package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import io.etcd.jetcd.api.KVGrpc;
import io.etcd.jetcd.api.RangeResponse;
import io.etcd.jetcd.api.TxnRequest;
import io.etcd.jetcd.api.TxnResponse;
import org.slf4j.Logger;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a lock's {@link EtcdAttempt} and a shared name's {@link SharedAttempt} do alike with their
 * entry in a queue under a prefix: the first poll creates it on the session's lease, only if neither
 * it nor the attempt's marker exists, and reads what is ahead in the same transaction; an entry of ours
 * already there is a leftover, deleted guarded by its create revision before creating ours (at most
 * {@value #LEFTOVERS} times); a lease the server no longer knows loses the session and creates the
 * entry once more on a new one. Later polls read the entry (gone: the attempt fails) and what is ahead,
 * unless the wait since the last poll proved what is ahead ({@link #proven()}, a shared name's).
 * A grant counts from the session's last confirmed keep-alive. An abandon stops the wait and deletes
 * the entry, guarded by its create revision once created, else by this attempt's value with the marker
 * written, so a creation that reaches the server late does nothing. Each attempt keeps its own
 * protocol: the key, the transactions' requests, what is ahead and when it grants, and the wait.
 *
 * <p>Concurrency: every mutable field is guarded by {@code this}, the subclasses' too; lock-api never
 * runs two calls of one attempt at once, but answers, watch events and session losses arrive on other
 * threads.
 *
 * @param <R> what a read finds ahead of the entry
 */
abstract class QueuedAttempt<R> implements LockAttempt {

    /** Leftovers removed before giving up on creating the entry. */
    private static final int LEFTOVERS = 3;

    /** No keep-alive sent with a poll ({@link #confirming}). */
    static final CompletableFuture<Void> CONFIRMED = CompletableFuture.completedFuture(null);

    private enum Created { NO, UNKNOWN, YES }

    /** What a create does when the server no longer knows its session's lease. */
    private enum LeaseGone { NEW_SESSION_ONCE, FAIL }

    /** Makes the grant of the entry {@code key}, created at {@code createRevision}, confirmed alive at {@code confirmed}. */
    interface Granting {
        Grant grant(String key, long createRevision, Session session, long confirmed);
    }

    /** What an abandon ends, taken holding {@code this}. */
    interface Stopping {
        /** Ends the wait, before the entry is removed. */
        void stop();

        /** Once the server answered the removal, confirmed or not. */
        default void removed() {
        }
    }

    /** How messages name the entry, the queue and a later poll's read. */
    record Kind(String entry, String queue, String reading) {
        static final Kind LOCK = new Kind("queue entry", "lock queue", "a queue read of ");
        static final Kind SHARED = new Kind("shared queue entry", "shared queue", "a read of shared queue ");
    }

    final EtcdDriver driver;
    final String prefix;
    final ByteString prefixBytes;
    final ByteString prefixEnd;
    final ByteString markerBytes;
    /** The entry's value: the owner and this attempt's id (and a share's weight). */
    final ByteString valueBytes;
    private final Kind kind;
    /** The attempt's own category (as before this class was split from the attempts). */
    private final Logger log;

    private Session session;
    private String key;
    private ByteString keyBytes;
    private Created created = Created.NO;
    private long createRevision;

    QueuedAttempt(EtcdDriver driver, Kind kind, String prefix, String marker, ByteString value, Logger log) {
        this.driver = driver;
        this.kind = kind;
        this.log = log;
        this.prefix = prefix;
        this.prefixBytes = Requests.bytes(prefix);
        this.prefixEnd = Requests.prefixEnd(prefixBytes);
        this.markerBytes = Requests.bytes(marker);
        this.valueBytes = value;
    }

    /** The entry's key on {@code s}; called holding {@code this}, before {@link #session()} is {@code s}. */
    abstract String keyOn(Session s);

    /** The creation: the entry, guarded by the marker and its absence, and the reads of what is ahead. */
    abstract TxnRequest createRequest(ByteString kb, Session s);

    /** The entry's create revision in the successful creation {@code r}, 0 when it is not there. */
    abstract long createdRevision(TxnResponse r, ByteString kb);

    /** A later poll's read: the entry (its first response) and what is ahead. */
    abstract TxnRequest recheckRequest(ByteString kb, long mine);

    /** What is ahead of the entry {@code mine}, from the creation's reads ({@code creation}) or a recheck's. */
    abstract CompletableFuture<R> ahead(TxnResponse r, long mine, boolean creation);

    /** Holding {@code this}: notes what {@code found} is ahead, for the wait; null when it does not grant. */
    abstract Granting noted(R found);

    /**
     * Holding {@code this}, as a later poll starts: what the last wait proved is ahead (everything
     * ahead known and fitting, and our entry not deleted), which grants without a read; null to read.
     */
    R proven() {
        return null;
    }

    /** Holding {@code this}, as the attempt is abandoned: takes the wait's state. */
    abstract Stopping stopping();

    /**
     * A keep-alive of {@code s} sent as a poll starts, which the poll's grant waits for, so that it counts
     * from then rather than from the session's last keep-alive; none by default. Never fails: a keep-alive
     * that finds the lease gone has lost the session, which the grant then checks.
     */
    CompletableFuture<Void> confirming(Session s) {
        return CONFIRMED;
    }

    @Override
    public final CompletionStage<Optional<Grant>> poll(Duration ttl) {
        R known;
        Session s;
        synchronized (this) {
            if (created == Created.NO) {
                return driver.session().thenCompose(next -> create(next, LeaseGone.NEW_SESSION_ONCE, LEFTOVERS));
            }
            known = proven();
            s = session;
        }
        if (known != null) {
            // As after a read: decide() still asks that the session be alive.
            return decide(s, CompletableFuture.completedFuture(known), CONFIRMED);
        }
        return recheck();
    }

    /**
     * One transaction: create our entry on the session's lease, unless the marker says the attempt
     * was abandoned or the entry exists, and read what is ahead. A lease the server no longer knows
     * fails the whole transaction before it writes anything: the session is then lost, and the entry
     * is created once more on a new one.
     */
    private CompletableFuture<Optional<Grant>> create(Session s, LeaseGone leaseGone, int leftovers) {
        String k;
        ByteString kb;
        synchronized (this) {
            k = keyOn(s);
            kb = Requests.bytes(k);
            session = s;
            key = k;
            keyBytes = kb;
            created = Created.UNKNOWN;
        }
        CompletableFuture<Void> confirmed = confirming(s);
        CompletableFuture<TxnResponse> txn = driver.writes().txn("queueing for " + prefix, createRequest(kb, s));
        CompletableFuture<Optional<Grant>> decided = txn.thenCompose(r -> {
            if (r.getSucceeded()) {
                long mine = createdRevision(r, kb);
                if (mine == 0) {
                    throw new LockException(LockException.Reason.PROTOCOL, "etcd did not return " + kind.entry() + " " + k
                            + " in the transaction that created it");
                }
                synchronized (this) {
                    created = Created.YES;
                    createRevision = mine;
                }
                return decide(s, ahead(r, mine, true), confirmed);
            }
            synchronized (this) {
                // A compare failed: the transaction wrote nothing.
                created = Created.NO;
            }
            if (r.getResponses(1).getResponseRange().getKvsCount() > 0) {
                throw new LockException(LockException.Reason.UNAVAILABLE, kind.entry() + " " + k
                        + " was abandoned before it was created");
            }
            if (leftovers == 0) {
                throw new LockException(LockException.Reason.UNAVAILABLE, kind.entry() + " " + k
                        + " kept reappearing: earlier attempts of this client are still creating it");
            }
            RangeResponse existing = r.getResponses(0).getResponseRange();
            if (existing.getKvsCount() == 0) {
                return create(s, LeaseGone.FAIL, leftovers - 1);
            }
            long stale = existing.getKvs(0).getCreateRevision();
            log.debug("removing {} (create revision {}), left over by an earlier attempt of this client", k, stale);
            return driver.guardedDelete(k, stale).thenCompose(deleted -> create(s, LeaseGone.FAIL, leftovers - 1));
        });
        if (leaseGone == LeaseGone.FAIL) {
            return decided;
        }
        return decided.handle((grant, error) -> {
            if (error == null) {
                return CompletableFuture.completedFuture(grant);
            }
            if (!EtcdErrors.leaseNotFound(error)) {
                return CompletableFuture.<Optional<Grant>>failedFuture(error);
            }
            synchronized (this) {
                // The server refused the whole transaction: nothing was created.
                created = Created.NO;
            }
            s.lose(new LockException(LockException.Reason.UNAVAILABLE, "etcd lease " + Long.toHexString(s.leaseId())
                    + " is gone (expired or revoked on the server)", EtcdErrors.unwrap(error)));
            return driver.session().thenCompose(next -> create(next, LeaseGone.FAIL, leftovers));
        }).thenCompose(f -> f);
    }

    private CompletableFuture<Optional<Grant>> recheck() {
        Session s;
        long mine;
        ByteString kb;
        synchronized (this) {
            s = session;
            mine = createRevision;
            kb = keyBytes;
        }
        if (!s.isAlive()) {
            return CompletableFuture.failedFuture(entryLost("its etcd lease was lost"));
        }
        CompletableFuture<Void> confirmed = confirming(s);
        CompletableFuture<TxnResponse> txn = driver.calls().unary(kind.reading() + prefix, KVGrpc.getTxnMethod(),
                recheckRequest(kb, mine));
        CompletableFuture<R> read = txn.thenCompose(r -> {
            RangeResponse own = r.getResponses(0).getResponseRange();
            if (own.getKvsCount() == 0 || own.getKvs(0).getCreateRevision() != mine) {
                // Most likely its lease ended: ask the server, so the session is lost (and the next
                // acquisition takes a new lease) before this one fails.
                return s.keepAliveOnce().handle((v, error) -> {
                    throw entryLost("its queue entry is gone (its lease expired, or it was deleted)");
                });
            }
            return ahead(r, mine, false);
        });
        return decide(s, read, confirmed);
    }

    /**
     * Granted when what is ahead lets the entry in and the session is alive. The read proved our
     * entry, so our lease, existed when it was served; the server keeps that lease for at least one
     * TTL from the send time of the session's last confirmed keep-alive, which the grant carries (the
     * one sent {@code alongside} the poll, if any, once answered).
     */
    private CompletableFuture<Optional<Grant>> decide(Session s, CompletableFuture<R> read, CompletableFuture<Void> alongside) {
        return read.thenCombine(alongside, (found, v) -> found).thenApply(found -> {
            Granting granting;
            String k;
            long rev;
            synchronized (this) {
                granting = noted(found);
                if (granting == null) {
                    return Optional.<Grant>empty();
                }
                k = key;
                rev = createRevision;
            }
            long confirmed = s.confirmedSentAt();
            if (!s.isAlive()) {
                throw entryLost("its etcd lease was lost");
            }
            return Optional.of(granting.grant(k, rev, s, confirmed));
        });
    }

    /** The entry's key, null before the first poll. */
    synchronized String key() {
        return key;
    }

    /** The entry's session, null before the first poll; call holding {@code this}. */
    final Session session() {
        return session;
    }

    /** The entry's create revision, 0 before its creation was confirmed; call holding {@code this}. */
    final long createRevision() {
        return createRevision;
    }

    /** The entry's key as bytes, null before the first poll; call holding {@code this}. */
    final ByteString keyBytes() {
        return keyBytes;
    }

    final LockException entryLost(String why) {
        return new LockException(LockException.Reason.UNAVAILABLE, "waiting for " + kind.queue() + " " + prefix
                + " stopped: " + why);
    }

    /**
     * Stops waiting and removes the entry: guarded by its create revision once created, else by this
     * attempt's value with the marker written, which stops our creation if it is still on its way; never
     * a later attempt's entry, even of the same acquisition.
     */
    @Override
    public final CompletionStage<Void> abandon() {
        Created state;
        long rev;
        Session s;
        String k;
        ByteString kb;
        Stopping stopping;
        synchronized (this) {
            state = created;
            rev = createRevision;
            s = session;
            k = key;
            kb = keyBytes;
            stopping = stopping();
        }
        stopping.stop();
        CompletableFuture<Void> done = switch (state) {
            case NO -> CompletableFuture.completedFuture(null);
            case YES -> driver.cleanUp("abandoning " + k, () -> driver.guardedDelete(k, rev), s);
            case UNKNOWN -> driver.cleanUp("abandoning unconfirmed " + k, () -> driver.calls().unary("abandoning " + k,
                    KVGrpc.getTxnMethod(), Requests.deleteIfOwnedAndMark(kb, valueBytes, markerBytes, s.leaseId())), s);
        };
        done.whenComplete((v, error) -> stopping.removed());
        return done;
    }
}
