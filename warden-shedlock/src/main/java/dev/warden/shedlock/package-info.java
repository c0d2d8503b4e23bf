/**
 * ShedLock over Warden: {@link dev.warden.shedlock.WardenLockProvider} is a ShedLock
 * {@code ExtensibleLockProvider} over any Warden backend (Redis, etcd, ZooKeeper, memory), chosen by the
 * {@link dev.warden.lock.LockClient}'s configuration; {@link dev.warden.shedlock.ShedLockLease} gives the
 * running task the Warden lease behind its lock: whether it still holds ({@code isValid()}, {@code onLost})
 * and its fencing token.
 *
 * <p>How ShedLock's durations map onto the lease: {@code lockAtMostFor} is the lease's maximum hold time,
 * {@code lockAtLeastFor} a release the lease keeper makes later while it keeps renewing the lease, and a
 * node that dies frees its locks after Warden's TTL. The guide: {@code docs/shedlock.md}.
 */
package dev.warden.shedlock;
