package dev.warden.quota;

import java.util.Locale;

/** What a journal entry (and an idempotency record) is. */
public enum EntryKind {
    OPEN,
    TOPUP,
    REFUND,
    DEDUCT,
    /** Quota moved from available to held ({@link QuotaService#hold}). */
    HOLD,
    /** Held quota used by a capture: it leaves the account. */
    CAPTURE,
    /** Held quota returned to available: a void, or what a capture did not use. */
    RELEASE,
    /** Held quota returned to available because its hold expired. */
    EXPIRE,
    /**
     * A posting to an account's named balances ({@link QuotaService#post}): one entry for all its lines,
     * which travel in the entry's {@code lines} field; the main balance does not move.
     */
    POST,
    /**
     * Quota moved out of one bucket of a split account ({@link QuotaService#split}), to another of its buckets:
     * journaled on the source bucket's partition, keyed by the move id. Net zero for the account with its
     * {@link #MOVEIN}.
     */
    MOVEOUT,
    /** Quota moved into one bucket of a split account: journaled on the target bucket's partition. */
    MOVEIN;

    /** The name used in the scripts and the journal, e.g. {@code deduct}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @throws IllegalArgumentException for a name no script writes
     */
    public static EntryKind fromWireName(String name) {
        for (EntryKind kind : values()) {
            if (kind.wireName().equals(name)) {
                return kind;
            }
        }
        throw new IllegalArgumentException("unknown entry kind '" + name + "'");
    }
}
