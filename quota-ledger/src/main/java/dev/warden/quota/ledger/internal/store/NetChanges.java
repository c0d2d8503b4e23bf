package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.journal.JournalEntry;

import java.util.Collections;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A batch's net change per account, so the account's row is updated once per batch rather than once
 * per entry: the sums of the changes to available and held quota, the highest fencing token, and the
 * lowest point each running sum reaches on the way, taken in the batch's order. The update refuses an
 * account whose lowest point would be below zero ({@link LedgerSql#applyNets}), so one update per
 * account refuses exactly the batches in which some entry, applied alone in its place, would have
 * taken the balance below zero (the {@code CHECK} still guards the row itself); the entry-by-entry
 * replay then finds that entry.
 *
 * <p>Not thread-safe: one batch's, on the consumer's thread.
 */
public final class NetChanges {

    /** One account's net change within the batch. */
    public static final class Net {
        private long available;
        private long held;
        private long fence = -1;
        /** The lowest the running sums reach (openings included), at most 0: the point before the first entry. */
        private long lowestAvailable;
        private long lowestHeld;
        /**
         * What the batch's openings after the account's first change add: part of the running sum, not of
         * the update (they are written before it, so the floor discounts them).
         */
        private long opened;

        public long available() {
            return available;
        }

        public long held() {
            return held;
        }

        /** The highest fencing token of the account's fenced deductions in the batch, -1 for none. */
        public long fence() {
            return fence;
        }

        /**
         * What the available balance, as the update finds it (the batch's openings applied), may add and stay
         * at or above zero at every entry: at most 0.
         */
        public long availableFloor() {
            return lowestAvailable - opened;
        }

        /** The same for held quota (openings hold nothing). */
        public long heldFloor() {
            return lowestHeld;
        }
    }

    // Sorted: every writer updates accounts in one order, so two batches cannot deadlock on two rows.
    private final SortedMap<String, Net> byAccount = new TreeMap<>();

    /** An opening in its place: it adds its amount to the running sum (it is written before the update). */
    public void open(JournalEntry opening) {
        Net n = byAccount.get(opening.account());
        if (n == null) {
            return; // nothing of the account before it in the batch: its row needs no update for it
        }
        n.opened += opening.amount(); // in the running sum only: the update must not add it again
    }

    /** A change in its place, after those added before it. */
    public void add(JournalEntry e) {
        Net n = byAccount.computeIfAbsent(e.account(), k -> new Net());
        n.available += e.delta();
        n.held += e.heldDelta();
        n.lowestAvailable = Math.min(n.lowestAvailable, n.available + n.opened);
        n.lowestHeld = Math.min(n.lowestHeld, n.held);
        if (e.kind() == EntryKind.DEDUCT && e.token().isPresent()) {
            n.fence = Math.max(n.fence, e.token().getAsLong());
        }
    }

    public boolean isEmpty() {
        return byAccount.isEmpty();
    }

    public int size() {
        return byAccount.size();
    }

    /** By account, in account order. */
    public SortedMap<String, Net> byAccount() {
        return Collections.unmodifiableSortedMap(byAccount);
    }
}
