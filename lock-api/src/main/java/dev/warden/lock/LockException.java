package dev.warden.lock;

import java.util.Objects;

/**
 * The one unchecked exception Warden throws for lock failures. The {@link Reason} says what went
 * wrong without parsing messages. When it wraps an {@link InterruptedException} the thread's
 * interrupt flag has been restored.
 */
public class LockException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a lock operation failed. */
    public enum Reason {
        /** The configuration is invalid; the message lists every problem. */
        CONFIGURATION,
        /** No provider on the class path serves the configured backend. */
        NO_PROVIDER,
        /** More than one provider serves the configured backend. */
        AMBIGUOUS_PROVIDER,
        /** The backend could not be reached or did not answer in time. */
        UNAVAILABLE,
        /**
         * The backend refused Warden's credentials or permissions: a wrong or missing password
         * (Redis {@code WRONGPASS}, {@code NOAUTH}), or a user whose ACL does not allow a command,
         * key or channel Warden needs (Redis {@code NOPERM}). Not retried: it will not pass by
         * waiting. The message names the endpoint, never the secret.
         */
        ACCESS_DENIED,
        /** A wait for the lock ran out (asynchronous acquire with a wait). */
        TIMEOUT,
        /** The waiting thread was interrupted; nothing is left held on the server. */
        INTERRUPTED,
        /** The acquisition was cancelled; nothing is left held on the server. */
        CANCELLED,
        /** The client is closed. */
        CLOSED,
        /** The backend answered with something Warden does not understand. */
        PROTOCOL,
        /**
         * {@link java.util.concurrent.locks.Lock#unlock()} on a lock view whose lease had been lost:
         * the hold is gone, but the critical section was not protected to its end; the message says
         * why the lease was lost. {@link Lease#release()} reports the same as
         * {@link ReleaseOutcome#LOST} instead.
         */
        LOST
    }

    private final Reason reason;

    public LockException(Reason reason, String message) {
        this(reason, message, null);
    }

    public LockException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /**
     * Wraps an interruption: restores the interrupt flag so callers up the stack still see it.
     */
    public static LockException interrupted(String message, InterruptedException cause) {
        Thread.currentThread().interrupt();
        return new LockException(Reason.INTERRUPTED, message, cause);
    }

    public Reason reason() {
        return reason;
    }
}
