/**
 * The ledger's command line, {@link dev.warden.quota.ledger.cli.LedgerCli}: {@code schema},
 * {@code consume}, {@code reconcile}, {@code bootstrap}, {@code quarantine} and {@code compensations}
 * over quota-ledger's public API ({@link dev.warden.quota.ledger.Ledger},
 * {@link dev.warden.quota.ledger.LedgerConsumer}, {@link dev.warden.quota.ledger.Reconciler}), with a
 * HikariCP pool of its own. Exit codes and what each command is for: {@code docs/operations.md}.
 */
package dev.warden.quota.ledger.cli;
