package dev.warden.quota;

import java.util.Objects;

/**
 * The one unchecked exception for quota failures that are not outcomes. The {@link Reason} says
 * what went wrong without parsing messages. When it wraps an {@link InterruptedException} the
 * thread's interrupt flag has been restored.
 *
 * <p>After {@link Reason#UNAVAILABLE} or {@link Reason#INTERRUPTED} a change may or may not have
 * been made; retry with the same request id: the retry is applied once or answers
 * {@link Outcome.Duplicate}.
 */
public class QuotaException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why a quota operation failed. */
    public enum Reason {
        /** The configuration is invalid; the message lists every problem. */
        CONFIGURATION,
        /** Redis could not be reached, did not answer in time, or is not serving (loading, busy). */
        UNAVAILABLE,
        /**
         * Redis refused the credentials or permissions: a wrong or missing password ({@code WRONGPASS},
         * {@code NOAUTH}) or an ACL user not allowed a command, key or channel ({@code NOPERM}); nothing
         * changed. The message names the endpoint, never the secret.
         */
        ACCESS_DENIED,
        /** Redis is over its maxmemory and refused the write before the script started: nothing changed. */
        OUT_OF_MEMORY,
        /**
         * The account's partition has no marker: Redis lost its data (or no account was ever opened
         * in that partition). Never reported as "account not found".
         */
        DATA_LOST,
        /** The partition's marker was written for another partition count: the configuration changed. */
        PARTITIONS_CHANGED,
        /** A fenced deduction was given a lease that is no longer valid; nothing was sent. */
        LEASE_INVALID,
        /** A charge could not get the account's lock within the configured wait. */
        LOCK_TIMEOUT,
        /** The lock backend failed; the cause is its {@code LockException}. */
        LOCK_FAILED,
        /** The waiting thread was interrupted (flag restored); the change may or may not have been made. */
        INTERRUPTED,
        /** The service is closed. */
        CLOSED,
        /** Redis answered something Warden does not understand (or a script refused its own arguments). */
        PROTOCOL,
        /** The ledger's database failed or could not be reached; the cause is the {@code SQLException}. */
        DATABASE,
        /** The ledger's tables are missing or behind: migrate them first ({@code Ledger.migrate}). */
        SCHEMA,
        /**
         * A recovery tool was asked to run before what must come first: a repair while Redis has lost data
         * that bootstrap has not restored, or while quarantined entries or refused compensations await a
         * person; a reconciliation while the journal holds more unpersisted entries than one run holds (the
         * consumers must drain first). Nothing was written; the message says what to run or resolve first.
         */
        RECOVERY_ORDER
    }

    private final Reason reason;

    public QuotaException(Reason reason, String message) {
        this(reason, message, null);
    }

    public QuotaException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    /** Wraps an interruption, restoring the interrupt flag. */
    public static QuotaException interrupted(String message, InterruptedException cause) {
        Thread.currentThread().interrupt();
        return new QuotaException(Reason.INTERRUPTED, message, cause);
    }

    public Reason reason() {
        return reason;
    }
}
