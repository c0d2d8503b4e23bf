package dev.warden.quota.ledger.reconcile;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * What one reconciliation found.
 *
 * @param checkedAt               when it started
 * @param accountsChecked         accounts compared (every account in Redis or in the database)
 * @param drifted                 accounts whose Redis balance differs from the database's plus the journal
 *                                entries not yet persisted, ordered by account: the first
 *                                {@link dev.warden.quota.ledger.Reconciler#MAX_REPORTED} found (a run keeps bounded memory)
 * @param driftedTotal            how many accounts drifted in all
 * @param partitionsWithoutMarker partitions whose marker is missing in Redis (Redis lost its data, or
 *                                nothing was ever opened there): a deduction there reports DATA_LOST
 * @param unpersistedEntries      journal entries not yet in the database (pending or not yet delivered)
 * @param unresolvedQuarantine    quarantined entries nobody has resolved: the ledger lacks what it refused
 * @param unresolvedCompensations compensations Redis refused that nobody has resolved: a replay both sides
 *                                hold (their figures agree, and are wrong by the replay)
 */
public record ReconciliationReport(Instant checkedAt, long accountsChecked, List<Drift> drifted, long driftedTotal,
                                   List<Integer> partitionsWithoutMarker, long unpersistedEntries,
                                   long unresolvedQuarantine, long unresolvedCompensations) {

    /** The name {@link Drift#balance()} gives a drift of what an account has on hold. */
    public static final String HELD = "(held)";

    public ReconciliationReport {
        Objects.requireNonNull(checkedAt, "checkedAt");
        drifted = List.copyOf(drifted);
        partitionsWithoutMarker = List.copyOf(partitionsWithoutMarker);
    }

    /**
     * Nothing needs a person: no account drifted, and no quarantined entry or refused compensation is
     * unresolved (either can leave Redis and the database agreeing on a wrong figure).
     */
    public boolean clean() {
        return driftedTotal == 0 && unresolvedQuarantine == 0 && unresolvedCompensations == 0;
    }

    /**
     * One account whose figures disagree.
     *
     * @param account         the account
     * @param partition       its partition
     * @param redisBalance    the balance in Redis; empty when Redis has no such account
     * @param databaseBalance the balance in the database; empty when the database has no such account
     * @param unpersisted     the sum of the changes of this account's journal entries not yet in the database
     * @param expected        what Redis should hold: database + unpersisted; empty when the account should not exist
     * @param difference      Redis − expected (a missing side counts as 0)
     * @param drained         whether no entry of the account was in flight, so the database alone is the
     *                        expected figure and {@link dev.warden.quota.ledger.Reconciler#repair} may rewrite Redis from it
     * @param balance         empty for the main balance (available + held); {@link ReconciliationReport#HELD} for
     *                        what is on hold; else the named balance that drifted (a named balance missing on a
     *                        side counts as 0 there); {@link dev.warden.quota.ledger.Reconciler#repair} rewrites only the main balance
     */
    public record Drift(String account, int partition, OptionalLong redisBalance, OptionalLong databaseBalance,
                        long unpersisted, OptionalLong expected, long difference, boolean drained, String balance) {

        public Drift {
            Objects.requireNonNull(balance, "balance");
        }

        /** A drift of the main balance. */
        public Drift(String account, int partition, OptionalLong redisBalance, OptionalLong databaseBalance,
                     long unpersisted, OptionalLong expected, long difference, boolean drained) {
            this(account, partition, redisBalance, databaseBalance, unpersisted, expected, difference, drained, "");
        }
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        b.append("reconciliation at ").append(checkedAt).append(": ").append(accountsChecked).append(" accounts checked, ")
                .append(driftedTotal).append(" drifted, ").append(unpersistedEntries).append(" journal entries not yet in the database, ")
                .append(unresolvedQuarantine).append(" unresolved quarantined entries, ").append(unresolvedCompensations)
                .append(" unresolved refused compensations");
        if (!partitionsWithoutMarker.isEmpty()) {
            b.append(", partitions without a marker: ").append(partitionsWithoutMarker);
        }
        if (driftedTotal > drifted.size()) {
            b.append(" (the first ").append(drifted.size()).append(" listed)");
        }
        for (Drift d : drifted) {
            b.append("\n  ").append(d.account()).append(d.balance().isEmpty() ? "" : ", balance " + d.balance())
                    .append(" (p").append(d.partition()).append("): redis ")
                    .append(text(d.redisBalance())).append(", database ").append(text(d.databaseBalance()))
                    .append(", unpersisted ").append(d.unpersisted()).append(", expected ").append(text(d.expected()))
                    .append(", difference ").append(d.difference()).append(d.drained() ? "" : " (entries in flight)");
        }
        return b.toString();
    }

    private static String text(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "absent";
    }
}
