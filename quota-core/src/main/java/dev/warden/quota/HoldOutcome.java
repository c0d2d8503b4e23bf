package dev.warden.quota;

import java.time.Instant;
import java.util.Objects;

/**
 * What a hold operation did ({@link QuotaService#hold}, {@link QuotaService#capture},
 * {@link QuotaService#release}), as a value. {@link #status()} gives an enum for a {@code switch}.
 *
 * <p>Which operation can answer what:
 * <ul>
 *   <li>hold: {@link Held}, {@link Duplicate}, {@link Conflict}, {@link Insufficient}, {@link AccountNotFound},
 *       {@link InvalidAmount};</li>
 *   <li>capture: {@link Captured}, {@link Duplicate}, {@link ExceedsHold}, {@link AlreadyCaptured} (another
 *       amount), {@link AlreadyReleased}, {@link Expired}, {@link UnknownHold}, {@link AccountNotFound},
 *       {@link InvalidAmount};</li>
 *   <li>release: {@link Released}, {@link Duplicate}, {@link AlreadyCaptured}, {@link Expired},
 *       {@link UnknownHold}, {@link AccountNotFound}.</li>
 * </ul>
 * Everything but {@link Held}, {@link Captured} and {@link Released} changed nothing (an {@link Expired}
 * answer may come with the expiry itself, journaled like a sweep's).
 */
public sealed interface HoldOutcome permits HoldOutcome.Held, HoldOutcome.Captured, HoldOutcome.Released,
        HoldOutcome.Expired, HoldOutcome.Duplicate, HoldOutcome.Conflict, HoldOutcome.Insufficient,
        HoldOutcome.UnknownHold, HoldOutcome.ExceedsHold, HoldOutcome.AlreadyCaptured, HoldOutcome.AlreadyReleased,
        HoldOutcome.AccountNotFound, HoldOutcome.InvalidAmount {

    /** The outcome as an enum. */
    enum Status {
        HELD,
        CAPTURED,
        RELEASED,
        EXPIRED,
        DUPLICATE,
        CONFLICT,
        INSUFFICIENT,
        UNKNOWN_HOLD,
        EXCEEDS_HOLD,
        ALREADY_CAPTURED,
        ALREADY_RELEASED,
        ACCOUNT_NOT_FOUND,
        INVALID_AMOUNT
    }

    Status status();

    /** Whether the operation is in effect: done now, or by the first call with this hold id. */
    default boolean isApplied() {
        return status() == Status.HELD || status() == Status.CAPTURED || status() == Status.RELEASED
                || status() == Status.DUPLICATE;
    }

    /**
     * The amount moved from available to held, journaled.
     *
     * @param available the account's available balance right after
     * @param held      the sum of the account's open holds right after
     * @param expiresAt when the hold returns to available by itself
     */
    record Held(long available, long held, Instant expiresAt, String entryId) implements HoldOutcome {
        public Held {
            Objects.requireNonNull(expiresAt, "expiresAt");
            Objects.requireNonNull(entryId, "entryId");
        }

        @Override
        public Status status() {
            return Status.HELD;
        }
    }

    /**
     * The hold was captured: {@code captured} left the account, {@code returned} (the rest of the hold)
     * went back to available.
     *
     * @param entryId the last journal entry it wrote
     */
    record Captured(long captured, long returned, long available, String entryId) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.CAPTURED;
        }
    }

    /** The hold was voided: all of it went back to available. */
    record Released(long returned, long available, String entryId) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.RELEASED;
        }
    }

    /** The hold had expired (now or before): {@code returned} went back to available, nothing was captured. */
    record Expired(long returned) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.EXPIRED;
        }
    }

    /** The same call was already made for this hold id; nothing changed. */
    record Duplicate(HoldOutcome original) implements HoldOutcome {
        public Duplicate {
            Objects.requireNonNull(original, "original");
        }

        @Override
        public Status status() {
            return Status.DUPLICATE;
        }
    }

    /** The hold id is already used by a hold of another amount; nothing changed. */
    record Conflict(long heldAmount) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.CONFLICT;
        }
    }

    /** The available balance does not cover the hold; nothing was held. */
    record Insufficient(long available) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.INSUFFICIENT;
        }
    }

    /** No hold with this id on the account (never made, or ended longer ago than the idempotency retention). */
    record UnknownHold(String holdId) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.UNKNOWN_HOLD;
        }
    }

    /** A capture of more than the hold; nothing changed. */
    record ExceedsHold(long held) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.EXCEEDS_HOLD;
        }
    }

    /** The hold was already captured (of {@code captured}); a void, or a capture of another amount, changes nothing. */
    record AlreadyCaptured(long captured) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.ALREADY_CAPTURED;
        }
    }

    /** The hold was already voided ({@code returned} went back); a capture changes nothing. */
    record AlreadyReleased(long returned) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.ALREADY_RELEASED;
        }
    }

    /** No such account in a partition that has its marker. */
    record AccountNotFound(String account) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.ACCOUNT_NOT_FOUND;
        }
    }

    /** The amount was refused before anything was sent. */
    record InvalidAmount(AmountProblem problem) implements HoldOutcome {
        @Override
        public Status status() {
            return Status.INVALID_AMOUNT;
        }
    }
}
