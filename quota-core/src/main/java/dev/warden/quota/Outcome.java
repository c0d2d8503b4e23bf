package dev.warden.quota;

import java.util.Objects;

/**
 * What an operation did, as a value: never a raw code. {@link #status()} gives an enum for a
 * {@code switch}; each status has its own record with the fields that matter.
 *
 * <p>Which operation can answer what:
 * <ul>
 *   <li>open: {@link Applied}, {@link AccountExists}, {@link InvalidAmount};</li>
 *   <li>top up, refund: {@link Applied}, {@link Duplicate}, {@link Conflict}, {@link AccountNotFound},
 *       {@link InvalidAmount} (including {@link AmountProblem#BALANCE_OVERFLOW});</li>
 *   <li>deduct and charge: {@link Applied}, {@link Duplicate}, {@link Conflict}, {@link Insufficient},
 *       {@link AccountNotFound}, {@link InvalidAmount}, {@link StaleFence}.</li>
 * </ul>
 * Failures that are not outcomes (Redis lost its data, the server is unavailable or out of memory,
 * an invalid lease) are {@link QuotaException}s; invalid ids are {@link InvalidIdException}s.
 */
public sealed interface Outcome permits Outcome.Applied, Outcome.Duplicate, Outcome.Conflict, Outcome.Insufficient,
        Outcome.AccountNotFound, Outcome.InvalidAmount, Outcome.StaleFence, Outcome.AccountExists {

    /** The outcome as an enum. */
    enum Status {
        APPLIED,
        DUPLICATE,
        CONFLICT,
        INSUFFICIENT,
        ACCOUNT_NOT_FOUND,
        INVALID_AMOUNT,
        STALE_FENCE,
        ACCOUNT_EXISTS
    }

    Status status();

    /** Whether the change is in effect: applied now, or by the first request with this request id. */
    default boolean isApplied() {
        return status() == Status.APPLIED || status() == Status.DUPLICATE;
    }

    /**
     * The change was made and journaled.
     *
     * @param balance the balance right after it
     * @param entryId the journal entry's stream id
     */
    record Applied(long balance, String entryId) implements Outcome {
        public Applied {
            Objects.requireNonNull(entryId, "entryId");
        }

        @Override
        public Status status() {
            return Status.APPLIED;
        }
    }

    /**
     * The request id was already applied with the same account, amount and kind; nothing changed.
     *
     * @param original the outcome of the first request
     */
    record Duplicate(Applied original) implements Outcome {
        public Duplicate {
            Objects.requireNonNull(original, "original");
        }

        @Override
        public Status status() {
            return Status.DUPLICATE;
        }
    }

    /**
     * The account already used this request id for a different change (another kind or amount);
     * nothing changed. The fields describe the recorded change. Request ids are unique per account:
     * another account's use of the same id is never a conflict.
     */
    record Conflict(EntryKind kind, String account, long amount) implements Outcome {
        @Override
        public Status status() {
            return Status.CONFLICT;
        }
    }

    /** The balance does not cover the amount; nothing changed. */
    record Insufficient(long balance) implements Outcome {
        @Override
        public Status status() {
            return Status.INSUFFICIENT;
        }
    }

    /** No such account in a partition that has its marker (so Redis did not lose it). */
    record AccountNotFound(String account) implements Outcome {
        @Override
        public Status status() {
            return Status.ACCOUNT_NOT_FOUND;
        }
    }

    /** The amount was refused; nothing was changed (and, when Java caught it, nothing was sent). */
    record InvalidAmount(AmountProblem problem) implements Outcome {
        @Override
        public Status status() {
            return Status.INVALID_AMOUNT;
        }
    }

    /**
     * The lease's fencing token is lower than one the account has already seen: its holder was
     * superseded; nothing changed.
     */
    record StaleFence(long token, long highWaterMark) implements Outcome {
        @Override
        public Status status() {
            return Status.STALE_FENCE;
        }
    }

    /** Open found the account already there; nothing changed. */
    record AccountExists(long balance) implements Outcome {
        @Override
        public Status status() {
            return Status.ACCOUNT_EXISTS;
        }
    }
}
