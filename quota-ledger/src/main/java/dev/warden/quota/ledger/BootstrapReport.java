package dev.warden.quota.ledger;

/**
 * What {@link Reconciler#bootstrap()} did.
 *
 * @param accountsLoaded  accounts written to Redis from the database (they were absent)
 * @param accountsPresent accounts Redis already held: left alone (reconcile and repair them instead)
 * @param markersWritten  partition markers written (they were missing)
 * @param balancesLoaded  named balances written to the accounts loaded, from the database's
 *                        {@code ledger_balances} (a balance opened but never posted to has no row, and
 *                        must be opened again)
 */
public record BootstrapReport(int accountsLoaded, int accountsPresent, int markersWritten, int balancesLoaded) {
}
