package dev.warden.quota.ledger.internal.reconcile;

/** Reconciliation's page size and log category, shared by its steps. */
public final class Pages {

    /** Accounts per page of a pass over the database or Redis: bounded memory whatever the ledger's size. */
    public static final int ACCOUNTS = 1000;

    /** Reconciliation logs under its public class's name, the category operators configure. */
    static final String RECONCILER_LOG = "dev.warden.quota.ledger.Reconciler";

    private Pages() {
    }
}
