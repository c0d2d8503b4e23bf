/**
 * How {@link dev.warden.shedlock.WardenLockProvider} keeps a ShedLock lock on a Warden lease: a
 * {@link dev.warden.shedlock.internal.Hold} per grant (the lease, its read-only view, the earliest its
 * maximum hold time can end, its binding to the thread that took it), a
 * {@link dev.warden.shedlock.internal.WardenSimpleLock} per ShedLock lock object (one hold is shared by a
 * lock and the locks its extensions return), and the per-thread stack of bound holds behind
 * {@link dev.warden.shedlock.ShedLockLease}. Not an API: it may change in any release.
 */
package dev.warden.shedlock.internal;
