package dev.warden.quota;

import java.util.Objects;

/**
 * What {@link QuotaService#split} or {@link QuotaService#merge} did, as a value.
 * <ul>
 *   <li>split: {@link Split}, {@link AlreadySplit}, {@link AccountNotFound};</li>
 *   <li>merge: {@link Merged}, {@link NotSplit}, {@link AccountNotFound}.</li>
 * </ul>
 */
public sealed interface SplitOutcome permits SplitOutcome.Split, SplitOutcome.AlreadySplit, SplitOutcome.Merged,
        SplitOutcome.NotSplit, SplitOutcome.AccountNotFound {

    /** The account is now split into {@code buckets} buckets, its balance spread evenly over them. */
    record Split(int buckets) implements SplitOutcome {
    }

    /** The account was already split into {@code buckets} buckets (merge it first to split it otherwise); nothing changed. */
    record AlreadySplit(int buckets) implements SplitOutcome {
    }

    /** The account's {@code buckets} buckets were emptied into its own key: it is one account again. */
    record Merged(int buckets) implements SplitOutcome {
    }

    /** The account is not split; nothing changed. */
    record NotSplit() implements SplitOutcome {
    }

    /** There is no such account. */
    record AccountNotFound(String account) implements SplitOutcome {
        public AccountNotFound {
            Objects.requireNonNull(account, "account");
        }
    }
}
