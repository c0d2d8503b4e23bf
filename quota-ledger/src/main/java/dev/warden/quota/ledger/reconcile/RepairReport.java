package dev.warden.quota.ledger.reconcile;

import java.util.List;
import java.util.OptionalLong;

/**
 * What {@link dev.warden.quota.ledger.Reconciler#repair(boolean)} did, or would do in a dry run.
 *
 * @param applied whether Redis was written (false: a dry run)
 * @param repairs one per drained, drifted account the database holds (the first
 *                {@link dev.warden.quota.ledger.Reconciler#MAX_REPORTED})
 * @param repairsTotal how many repairs were made (or planned) in all
 * @param skipped drifted accounts left alone: entries in flight, or an account only Redis holds (a person
 *                decides; repair never deletes); the first {@link dev.warden.quota.ledger.Reconciler#MAX_REPORTED}
 * @param before  the reconciliation the plan was made from
 */
public record RepairReport(boolean applied, List<Repair> repairs, long repairsTotal, List<ReconciliationReport.Drift> skipped,
                           ReconciliationReport before) {

    public RepairReport {
        repairs = List.copyOf(repairs);
        skipped = List.copyOf(skipped);
    }

    /** What happened to one account. */
    public enum Status {
        /** Dry run: this is what would be written. */
        PLANNED,
        /** Redis now holds the database's balance. */
        APPLIED,
        /** Redis changed between the check and the write (a change landed): left alone; check again. */
        CHANGED,
        /** The partition's marker belongs to another partition count: left alone. */
        REFUSED
    }

    /**
     * @param account the account
     * @param from    the Redis balance seen (empty: absent)
     * @param to      the database's balance written
     */
    public record Repair(String account, OptionalLong from, long to, Status status) {
    }
}
