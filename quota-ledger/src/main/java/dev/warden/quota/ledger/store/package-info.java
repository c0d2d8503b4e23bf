/**
 * The ledger database's public face: the {@link dev.warden.quota.ledger.store.Dialect}s the schema is
 * written for. The schema and its rows are {@link dev.warden.quota.ledger.Ledger}'s to manage.
 */
package dev.warden.quota.ledger.store;
