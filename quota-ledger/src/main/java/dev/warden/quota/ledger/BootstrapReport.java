package dev.warden.quota.ledger;

/**
 * What {@link Reconciler#bootstrap()} did.
 *
 * @param accountsLoaded  accounts written to Redis from the database (they were absent)
 * @param accountsPresent accounts Redis already held: left alone (reconcile and repair them instead)
 * @param markersWritten  partition markers written (they were missing)
 */
public record BootstrapReport(int accountsLoaded, int accountsPresent, int markersWritten) {
}
