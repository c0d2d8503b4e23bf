/**
 * How {@link dev.warden.integration.WardenLockRegistry} keeps its locks: a
 * {@link dev.warden.integration.internal.LockTable} per registry (the cache of lock objects, and each thread's holds
 * per name, newest first), a {@code RegistryLock} per cached name, a {@code Hold} per acquisition (the lease Warden
 * returned for it) and a {@code Grant} shared by a thread's reentrant holds of one lease (its read-only view, its
 * maximum hold time, how it was lost). Not an API: it may change in any release.
 */
package dev.warden.integration.internal;
