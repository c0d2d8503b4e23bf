/**
 * The billing demo, run with {@code ./demo.sh}: three channels charge merchants concurrently through
 * the quota engine's {@code charge}, under each merchant's lock (Redis, etcd, ZooKeeper) or none; a
 * ledger consumer drains the journal into a database; at the end a reconciliation and a set of
 * invariants say whether the money stayed right. Start at {@link BillingDemo}; {@link Report} is what
 * one run did.
 */
package dev.warden.examples.billing;
