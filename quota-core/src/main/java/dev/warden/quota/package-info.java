/**
 * The quota engine's API: quota accounts in Redis, each change one Lua script that is atomic,
 * idempotent per (account, request id), journaled to its partition's stream (which quota-ledger moves
 * into a database) and, when the call carries a lock's lease, fenced against superseded holders. Start
 * with {@link QuotaService#create(java.util.Map)}, which reads the {@code warden.quota.*} settings;
 * then open accounts and change them: {@link QuotaService#deduct(String, long, String)},
 * {@link QuotaService#charge(String, String, Pricing)} (price and deduct under the account's lock),
 * holds, postings to named balances, split accounts. Every call answers with a value that says what it
 * did ({@link Outcome}, {@link HoldOutcome}, {@link PostingOutcome}, {@link SplitOutcome}), never a raw
 * code; failures that are not outcomes are {@link QuotaException}s, invalid ids
 * {@link InvalidIdException}s, and {@link QuotaListener} is the hook for metrics.
 */
package dev.warden.quota;
