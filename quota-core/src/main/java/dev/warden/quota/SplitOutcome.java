package dev.warden.quota;

import java.util.Objects;

/**
 * What {@link QuotaService#split} or {@link QuotaService#merge} did, as a value.
 * <ul>
 *   <li>split: {@link Split}, {@link AlreadySplit}, {@link AccountNotFound};</li>
 *   <li>merge: {@link Merged}, {@link NotSplit}, {@link AccountNotFound}, {@link TooLarge}.</li>
 * </ul>
 */
public sealed interface SplitOutcome permits SplitOutcome.Split, SplitOutcome.AlreadySplit, SplitOutcome.Merged,
        SplitOutcome.NotSplit, SplitOutcome.AccountNotFound, SplitOutcome.TooLarge {

    /** The account is now split into {@code buckets} buckets, its balance spread evenly over them. */
    record Split(int buckets) implements SplitOutcome {
    }

    /** The account was already split into {@code buckets} buckets (merge it first to split it otherwise); nothing changed. */
    record AlreadySplit(int buckets) implements SplitOutcome {
    }

    /** The account's {@code buckets} buckets were emptied into its own key: it is one account again. */
    record Merged(int buckets) implements SplitOutcome {
    }

    /**
     * The buckets together hold more than one balance may (2^53−1: credits to several buckets can add up
     * beyond it); nothing changed. Deduct or refund below it, then merge.
     */
    record TooLarge(long total) implements SplitOutcome {
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
