package dev.warden.lock.spi;

/**
 * A driver that can grant one name to several holders at once, by weight: what semaphores and read-write
 * locks are built on. Every bundled driver except the migrating step is one; lock-api refuses a semaphore
 * or a read-write lock with {@code CONFIGURATION} on a driver that is not.
 *
 * <p>A shared name lives apart from the lock of the same name (its own keys or paths), and lock-api
 * prefixes it ({@code semaphore:x}, {@code rw:x}); the driver need not tell the two apart by name.
 *
 * <p>The contract, beyond {@link LockDriver}'s:
 * <ul>
 *   <li>Entries are kept in arrival order on the server and granted by {@link Share#fitsBehind}; a
 *       waiting entry counts against the ones behind it, so nothing barges.</li>
 *   <li>Each grant carries its own fencing token: distinct among grants of the name, and higher than the
 *       token of every grant of the name that arrived before it (a writer's token exceeds every reader's
 *       granted before it, and every later grant's exceeds the writer's).</li>
 *   <li>Grants are renewed with {@link LockDriver#renew} and released with {@link LockDriver#release},
 *       compare-and-renew and compare-and-delete on the owner and token, like a lock's; a released or
 *       abandoned entry wakes the attempts behind it.</li>
 *   <li>An entry whose holder or waiter died stops counting within the TTL (on its session, or by an
 *       expiry renewed by its polls and renewals), so permits of a dead holder come back.</li>
 *   <li>An attempt that is abandoned leaves nothing behind; one that is granted stops watching.</li>
 * </ul>
 */
public interface SharedLockDriver extends LockDriver {

    /**
     * Starts an attempt to take {@code share} of the shared name {@code name}.
     *
     * @param name the validated name (the driver applies the namespace and any encoding)
     * @param owner unique per acquisition, as for {@link LockDriver#attempt}
     * @param share the weight asked for and the limit it is granted under
     */
    LockAttempt attemptShared(String name, String owner, Share share);
}
