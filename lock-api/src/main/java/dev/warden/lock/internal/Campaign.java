package dev.warden.lock.internal;

import dev.warden.lock.Candidacy;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LeadershipListener;
import dev.warden.lock.LockException;
import dev.warden.lock.StepDown;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One candidacy: an acquisition of the election's lock that waits without limit, whose grant starts a
 * term and whose lease's end ends it, then (unless the candidacy is closed) another acquisition. The
 * listener hears of each term on the client's event thread, {@code elected} before {@code stepped},
 * and of a term it never heard elected, nothing.
 *
 * <p>Concurrency: {@code closed}, {@code standing}, {@code waiting}, {@code current} and each {@link Term}'s flags are
 * guarded by {@code this}; the listener is called outside it, on the event thread only.
 */
final class Campaign implements Candidacy {

    private static final Logger log = LoggerFactory.getLogger(Campaign.class);

    private final DefaultLock lock;
    private final ClientParts parts;
    private final String election;
    private final String candidateId;
    private final LeadershipListener listener;
    private final Runnable onClosed;

    private boolean closed;
    /** Between asking for the next term and its grant or failure. */
    private boolean standing;
    /** The acquisition waiting for the next term, if any. */
    private CompletableFuture<Lease> waiting;
    /** The term this candidate leads in, if any. */
    private Term current;

    /** A term: its lease, whether the listener was told it began, whether it ended. Guarded by the campaign. */
    private static final class Term {
        final Lease lease;
        boolean told;
        boolean ended;

        Term(Lease lease) {
            this.lease = lease;
        }
    }

    Campaign(DefaultLock lock, ClientParts parts, String election, String candidateId, LeadershipListener listener,
             Runnable onClosed) {
        this.lock = lock;
        this.parts = parts;
        this.election = election;
        this.candidateId = candidateId;
        this.listener = listener;
        this.onClosed = onClosed;
    }

    /** Asks for the next term: an acquisition made out to this candidate, waiting without limit. */
    void stand() {
        synchronized (this) {
            if (closed || standing || current != null) {
                return;
            }
            standing = true;
        }
        CompletableFuture<Lease> next;
        try {
            next = lock.acquireAsOwner("/" + candidateId);
        } catch (LockException e) {
            synchronized (this) {
                // The client closed under us.
                closed = true;
                standing = false;
            }
            return;
        }
        boolean cancel;
        synchronized (this) {
            cancel = closed;
            if (!cancel) {
                waiting = next;
            }
        }
        if (cancel) {
            next.cancel(false);
        }
        next.whenComplete((lease, error) -> granted(next, lease, error));
    }

    private void granted(CompletableFuture<Lease> acquisition, Lease lease, Throwable error) {
        Term term = null;
        boolean again = false;
        synchronized (this) {
            standing = false;
            if (waiting == acquisition) {
                waiting = null;
            }
            if (error == null && !closed) {
                term = new Term(lease);
                current = term;
            } else if (error != null && !closed) {
                again = !(Outage.unwrap(error) instanceof LockException e && e.reason() == LockException.Reason.CLOSED);
                closed = !again;
            }
        }
        if (error == null && term == null) {
            quietly(lease); // closed while the grant was on its way
            return;
        }
        if (error != null) {
            if (again) {
                log.warn("election '{}': candidate '{}' could not stand ({}); standing again in {} ms", election, candidateId,
                        Outage.unwrap(error).getMessage(), retryNanos() / 1_000_000);
                parts.time().schedule(this::stand, retryNanos());
            }
            return;
        }
        Term t = term;
        parts.events().execute(() -> {
            synchronized (this) {
                if (t.ended) {
                    return;
                }
                t.told = true;
            }
            try {
                listener.elected(t.lease);
            } catch (RuntimeException e) {
                log.warn("election '{}': the listener of candidate '{}' failed when elected", election, candidateId, e);
            }
            t.lease.onLost(lost -> end(t, StepDown.LOST, lost));
        });
    }

    /** Ends {@code t} once: the listener is told if it heard the term begin; unless leaving, stands again. */
    private void end(Term t, StepDown why, LeaseLost lost) {
        boolean tell;
        synchronized (this) {
            if (t.ended) {
                return;
            }
            t.ended = true;
            tell = t.told;
            if (current == t) {
                current = null;
            }
        }
        parts.events().execute(() -> {
            if (tell) {
                try {
                    listener.stepped(t.lease.fencingToken(), why, lost);
                } catch (RuntimeException e) {
                    log.warn("election '{}': the listener of candidate '{}' failed when stepping down", election, candidateId, e);
                }
            }
            if (why == StepDown.RESIGNED) {
                // The candidates already waiting get a renewal interval to take the next term.
                parts.time().schedule(this::stand, retryNanos());
            } else if (why == StepDown.LOST) {
                stand();
            }
        });
    }

    private long retryNanos() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(1), parts.config().ttl().toNanos() / 3);
    }

    @Override
    public String candidateId() {
        return candidateId;
    }

    @Override
    public synchronized Optional<Lease> leadership() {
        return current == null ? Optional.empty() : Optional.of(current.lease);
    }

    @Override
    public void resign() {
        Term t;
        synchronized (this) {
            t = current;
            if (t == null || closed) {
                return;
            }
        }
        quietly(t.lease);
        end(t, StepDown.RESIGNED, null);
    }

    @Override
    public void close() {
        Term t;
        CompletableFuture<Lease> w;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            t = current;
            w = waiting;
            waiting = null;
        }
        if (w != null) {
            w.cancel(false); // the acquisition stops and cleans up after itself
        }
        if (t != null) {
            quietly(t.lease);
            end(t, StepDown.CLOSED, null);
        }
        onClosed.run();
    }

    private void quietly(Lease lease) {
        try {
            lease.release();
        } catch (LockException e) {
            log.warn("election '{}': candidate '{}' could not confirm the release of its term {}; it ends within its TTL",
                    election, candidateId, lease.fencingToken(), e);
        }
    }

    @Override
    public String toString() {
        Term t;
        synchronized (this) {
            t = current;
        }
        return "Candidacy[" + election + ", " + candidateId + (t != null ? ", leading in term " + t.lease.fencingToken() : "") + "]";
    }
}
