/**
 * What reconciliation reports: a check's drifts, a repair's changes and a bootstrap's reload. The
 * reconciler itself is {@link dev.warden.quota.ledger.Reconciler}.
 */
package dev.warden.quota.ledger.reconcile;
