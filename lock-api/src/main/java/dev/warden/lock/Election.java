package dev.warden.lock;

import java.util.Optional;

/**
 * Leader election over the client's backend: candidates {@linkplain #join join} an election by name,
 * at most one leads at a time, and each term's number is the fencing token of the lock the leader
 * holds, so terms rise strictly from one leader to the next (through restarts and a switch of backend,
 * as every token does) and a resource that keeps the highest term it saw refuses a deposed leader's
 * write from its successor's first write on.
 *
 * <p>An election named {@code x} is the lock named {@code election:x} of the client's namespace: its
 * leader is that lock's holder, renewed by the client's keeper, and it stops leading exactly when that
 * lease stops being valid (lost, resigned, or the client closed). Leadership has the lock's failure
 * model and its TTL: a leader cut off from the server learns it has stopped leading no later than its
 * lease's deadline, the moment another candidate may start a term.
 *
 * <p>Cheap and immutable: the state lives in each {@link Candidacy} and on the server.
 */
public interface Election {

    /** The election's name. */
    String name();

    /**
     * Stands as candidate {@code candidateId}: campaigns in the background from now on, tells
     * {@code listener} each time this candidate starts or stops leading, and after a lost term stands
     * again, until the candidacy is closed (or the client is). The id is what {@link #leader()} shows
     * to observers; several candidacies may share one.
     *
     * @param candidateId non-empty, at most 128 bytes of UTF-8, without control characters
     * @throws IllegalArgumentException when the id is invalid
     * @throws LockException {@code CLOSED} when the client is closed
     */
    Candidacy join(String candidateId, LeadershipListener listener);

    /**
     * The leader as the server sees it now: its candidate id and term, read without standing. Empty
     * when nobody leads. One read of the server (see each backend's cost in docs/locks.md).
     *
     * @throws LockException {@code UNAVAILABLE} when the server cannot be read within the request
     *         timeout; {@code CONFIGURATION} when the backend's driver cannot read holders
     */
    Optional<Leader> leader();

    /**
     * A leader as observers see it.
     *
     * @param candidateId the id the leader joined with
     * @param term its term: the fencing token of its lease under the observer's fencing epoch
     */
    record Leader(String candidateId, long term) {
    }
}
