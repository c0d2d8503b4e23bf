/**
 * Spring Integration over Warden: {@link dev.warden.integration.WardenLockRegistry} is a Spring Integration
 * {@code ExpirableLockRegistry} and {@code RenewableLockRegistry} over any Warden backend (Redis, etcd, ZooKeeper,
 * memory), chosen by the {@link dev.warden.lock.LockClient}'s configuration; its locks are
 * {@link dev.warden.integration.WardenLock}s, Spring Integration {@code DistributedLock}s whose holder reads the
 * Warden lease behind its hold ({@code lease()}: validity, fencing token, {@code onLost}).
 *
 * <p>Leases are renewed by Warden's keeper for as long as they are held; a {@code ttl} given to a lock is its
 * maximum hold time. The guide, with every difference from Spring's own registries:
 * {@code docs/spring-integration.md}.
 */
package dev.warden.integration;
