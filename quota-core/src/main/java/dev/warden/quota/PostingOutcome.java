package dev.warden.quota;

import java.util.Collections;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What {@link QuotaService#post} or {@link QuotaService#openBalance} did, as a value. {@link #status()}
 * gives an enum for a {@code switch}.
 *
 * <p>Which operation can answer what:
 * <ul>
 *   <li>post: {@link Posted}, {@link Duplicate}, {@link Conflict}, {@link Insufficient}, {@link UnknownBalance},
 *       {@link AccountNotFound}, {@link InvalidAmount} (including {@link AmountProblem#BALANCE_OVERFLOW}),
 *       {@link InvalidPosting};</li>
 *   <li>openBalance: {@link Opened}, {@link BalanceExists}, {@link AccountNotFound}.</li>
 * </ul>
 * Everything but {@link Posted} and {@link Opened} changed nothing: a posting is applied whole or not at all.
 */
public sealed interface PostingOutcome permits PostingOutcome.Posted, PostingOutcome.Opened, PostingOutcome.Duplicate,
        PostingOutcome.Conflict, PostingOutcome.Insufficient, PostingOutcome.UnknownBalance, PostingOutcome.BalanceExists,
        PostingOutcome.AccountNotFound, PostingOutcome.InvalidAmount, PostingOutcome.InvalidPosting {

    /** The outcome as an enum. */
    enum Status {
        POSTED,
        OPENED,
        DUPLICATE,
        CONFLICT,
        INSUFFICIENT,
        UNKNOWN_BALANCE,
        BALANCE_EXISTS,
        ACCOUNT_NOT_FOUND,
        INVALID_AMOUNT,
        INVALID_POSTING
    }

    Status status();

    /** Whether the posting is in effect: done now, or by the first call with this request id. */
    default boolean isApplied() {
        return status() == Status.POSTED || status() == Status.DUPLICATE;
    }

    /**
     * Every line was applied, in one script, journaled as one entry ({@link EntryKind#POST}).
     *
     * @param balances each posted balance right after, by name
     */
    record Posted(SortedMap<String, Long> balances, String entryId) implements PostingOutcome {
        public Posted {
            balances = Collections.unmodifiableSortedMap(new TreeMap<>(balances));
            Objects.requireNonNull(entryId, "entryId");
        }

        @Override
        public Status status() {
            return Status.POSTED;
        }
    }

    /** The balance was opened, at 0. */
    record Opened(String balance) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.OPENED;
        }
    }

    /** The same posting was already made with this request id; nothing changed. */
    record Duplicate(Posted original) implements PostingOutcome {
        public Duplicate {
            Objects.requireNonNull(original, "original");
        }

        @Override
        public Status status() {
            return Status.DUPLICATE;
        }
    }

    /**
     * The request id was already used on this account by another change: a posting with other lines
     * ({@link EntryKind#POST}), or a deduction, top-up or refund ({@code kind}); nothing changed.
     */
    record Conflict(EntryKind kind) implements PostingOutcome {
        public Conflict {
            Objects.requireNonNull(kind, "kind");
        }

        @Override
        public Status status() {
            return Status.CONFLICT;
        }
    }

    /** {@code balance} holds less than the posting debits from it ({@code available}); nothing was posted anywhere. */
    record Insufficient(String balance, long available) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.INSUFFICIENT;
        }
    }

    /** The account has no balance of this name ({@link QuotaService#openBalance} opens one); nothing was posted. */
    record UnknownBalance(String balance) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.UNKNOWN_BALANCE;
        }
    }

    /** The balance is already open, holding {@code amount}; nothing changed. */
    record BalanceExists(String balance, long amount) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.BALANCE_EXISTS;
        }
    }

    /** No such account in a partition that has its marker. */
    record AccountNotFound(String account) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.ACCOUNT_NOT_FOUND;
        }
    }

    /**
     * The amount of one line was refused: zero or out of range (before anything was sent), or a credit that
     * would take {@code balance} above 2^53−1 ({@link AmountProblem#BALANCE_OVERFLOW}); nothing was posted.
     */
    record InvalidAmount(String balance, AmountProblem problem) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.INVALID_AMOUNT;
        }
    }

    /** The posting as a whole was refused before anything was sent. */
    record InvalidPosting(Problem problem) implements PostingOutcome {
        @Override
        public Status status() {
            return Status.INVALID_POSTING;
        }
    }

    /** Why a posting as a whole was refused. */
    enum Problem {
        /** No lines. */
        EMPTY,
        /** More than {@link QuotaService#MAX_POSTING_LINES} balances in one posting. */
        TOO_MANY_BALANCES
    }
}
