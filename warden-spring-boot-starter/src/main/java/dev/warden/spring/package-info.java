/**
 * Warden in a Spring application. Annotate a bean method with {@link WithLock} to run it under a lock,
 * read its lease inside with {@link CurrentLease#get()}, and choose with {@link OnLockTimeout} what
 * happens when the lock is not free in time (by default a {@link LockTimeoutException}).
 * {@link WithLockPostProcessor} makes the annotation work; the auto-configuration in
 * {@code dev.warden.spring.autoconfigure} registers it, with a lock client, a quota service, their
 * health indicators and meters, from the {@code warden.*} properties. {@link QuotaSettings} hands the
 * quota service's settings to the ledger's consumer and reconciler, which connect to the same Redis.
 */
package dev.warden.spring;
