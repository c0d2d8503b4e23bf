package dev.warden.quota.ledger.reconcile;


/**
 * What {@link dev.warden.quota.ledger.Reconciler#bootstrap()} did.
 *
 * @param accountsLoaded       accounts written to Redis from the database (they were absent), each whole:
 *                             available and held quota, fence mark, open holds
 * @param accountsPresent      accounts Redis already held: left alone (reconcile and repair them instead)
 * @param markersWritten       partition markers written (they were missing)
 * @param balancesLoaded       named balances written to the accounts loaded, from the database's
 *                             {@code ledger_balances} (a balance opened but never posted to has no row, and
 *                             must be opened again)
 * @param holdsLoaded          open holds restored with the accounts loaded (their quota still held, their expiry
 *                             as journaled)
 * @param compensationsMade    compensations the ledger owed when Redis lost its data (a replay it had applied
 *                             and not yet undone in Redis), made now
 * @param movesCompleted       moves between the buckets of a split account that the ledger held half of (Redis
 *                             lost the other half): each completed on the account, journaled under its id
 */
public record BootstrapReport(int accountsLoaded, int accountsPresent, int markersWritten, int balancesLoaded,
                              int holdsLoaded, int compensationsMade, int movesCompleted) {
}
