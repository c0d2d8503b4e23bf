package dev.warden.quota.ledger.journal;

/** Why the ledger refused a journal entry. Each means Redis and the database disagree, or the entry is damaged. */
public enum QuarantineReason {
    /** The entry's fields cannot be read (missing, not a number, unknown kind, invalid id). */
    MALFORMED,
    /** Applying it would take the database balance below zero (the {@code CHECK (balance >= 0)} failed). */
    NEGATIVE_BALANCE,
    /** The database has no such account. */
    UNKNOWN_ACCOUNT,
    /** An opening of an account the database already holds (Redis lost it and it was opened again). */
    ACCOUNT_EXISTS,
    /** Another constraint or data error of the database; the detail holds its message. */
    CONSTRAINT
}
