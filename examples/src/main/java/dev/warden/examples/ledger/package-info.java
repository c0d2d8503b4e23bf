/**
 * The ledger beside the quota engine: {@link dev.warden.examples.ledger.LedgerSync} drains the journal
 * into the ledger database with a journal consumer, then reconciles Redis with it.
 */
package dev.warden.examples.ledger;
