/**
 * What a journal consumer tells its host: {@link dev.warden.quota.ledger.consume.LedgerListener}, the
 * metrics and alerting hooks. The consumer itself is {@link dev.warden.quota.ledger.LedgerConsumer}.
 */
package dev.warden.quota.ledger.consume;
