/**
 * The engine behind {@link dev.warden.quota.QuotaService}: {@link QuotaFactory} connects and loads the
 * scripts ({@link Scripts}); {@code RedisQuotaService} checks arguments and hands each operation to the
 * class that owns its protocol: {@code Deductions} (the deduct and credit scripts), {@code Buckets},
 * {@code BucketMoves} and {@code SplitLifecycle} (split accounts), {@code Holds}, {@code Postings},
 * {@code Charges} under {@code AccountLocks}' lock policy, and {@code DeductionBatches} for
 * {@code deductAll}. {@code Replies} and {@code Errors} turn what Redis answers into outcomes and
 * exceptions. Internal to Warden: no compatibility promise.
 */
package dev.warden.quota.internal;
