package dev.warden.lock;

/** Why a leader stopped leading. */
public enum StepDown {
    /** Its lease was lost (expired, taken, session ended, client closed with the release unconfirmed). */
    LOST,
    /** {@link Candidacy#resign()}: it stands again behind the others. */
    RESIGNED,
    /** {@link Candidacy#close()} or the client's close: it left the election. */
    CLOSED
}
