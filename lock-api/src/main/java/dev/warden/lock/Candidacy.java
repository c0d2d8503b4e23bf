package dev.warden.lock;

import java.util.Optional;

/**
 * One candidate's standing in an {@link Election}, from {@link Election#join} until {@link #close()}.
 * Thread-safe.
 */
public interface Candidacy extends AutoCloseable {

    /** The id this candidate joined with. */
    String candidateId();

    /**
     * The lease of the current term while this candidate leads (its fencing token is the term, its
     * {@link Lease#isValid()} the moment of truth before acting as leader); empty otherwise.
     */
    Optional<Lease> leadership();

    /**
     * Steps down if leading (the listener is told {@link StepDown#RESIGNED}) and stands again behind
     * the candidates already waiting. Does nothing when not leading.
     */
    void resign();

    /**
     * Steps down if leading (told {@link StepDown#CLOSED}) and leaves the election: a campaign still
     * waiting stops and leaves nothing on the server. Idempotent.
     */
    @Override
    void close();
}
