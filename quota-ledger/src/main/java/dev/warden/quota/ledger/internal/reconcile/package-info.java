/**
 * Reconciliation's steps: the figures the ledger and the journal agree on
 * ({@link dev.warden.quota.ledger.internal.reconcile.LedgerFigures}), one account compared
 * ({@link dev.warden.quota.ledger.internal.reconcile.AccountComparison},
 * {@link dev.warden.quota.ledger.internal.reconcile.BalanceDrifts}), the order of a recovery
 * ({@link dev.warden.quota.ledger.internal.reconcile.RecoveryOrder}), a bootstrap of an empty Redis
 * ({@link dev.warden.quota.ledger.internal.reconcile.Bootstrap}) and the timer
 * ({@link dev.warden.quota.ledger.internal.reconcile.ReconciliationSchedule}). The entry point is
 * {@link dev.warden.quota.ledger.Reconciler}. Internal to Warden: no compatibility promise.
 */
package dev.warden.quota.ledger.internal.reconcile;
