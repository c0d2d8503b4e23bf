package dev.warden.integration;

import dev.warden.lock.Lease;
import org.springframework.integration.support.locks.DistributedLock;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A lock of a {@link WardenLockRegistry}: Spring Integration's {@link DistributedLock} over one Warden lock, and
 * the lease behind the current thread's hold.
 *
 * <p>Holds belong to threads, as {@link java.util.concurrent.locks.Lock} says, and are reentrant: a thread that
 * holds the lock and locks it again gets the same lease (same fencing token) and must unlock it as many times. The
 * lock on the server is released by the last {@link #unlock()}. While held, Warden's lease keeper renews the lease
 * every TTL/3 ({@code warden.lock.ttl}), however long the hold lasts; a process that dies frees the lock within
 * one TTL.
 *
 * <p>What each method does on Warden, and where it differs from Spring's own registries:
 * <ul>
 *   <li>{@link #lock()} is not interruptible: an interrupt ends the attempt it hits (nothing is left held) and a new
 *       one starts, and the flag is set again when it returns; {@link #tryLock()} answers on an interrupted thread
 *       too, keeping the flag. {@link #lockInterruptibly()} and {@link #tryLock(long, TimeUnit)} throw
 *       {@link InterruptedException} (the flag cleared) and leave nothing held on the server.</li>
 *   <li>{@link #lock(Duration)} and {@link #tryLock(Duration, Duration)}: the {@code ttl} is the hold's
 *       <em>maximum hold time</em>: the keeper renews the lease until then, then releases the lock on the server and
 *       the lease reads lost ({@code MAX_HOLD_TIME}), as an expired key does in Spring's Redis and JDBC registries.
 *       Re-entering with a {@code ttl} moves the limit of the hold it joins to {@code ttl} from now; re-entering
 *       without one keeps the limit. {@link WardenLockRegistry#renewLock(Object, Duration)} moves it too.</li>
 *   <li>{@link #unlock()} by a thread that does not hold the lock throws {@link IllegalMonitorStateException}. An
 *       unlock of a hold whose lease was lost meanwhile (expired, past its maximum hold time, force-released by an
 *       operator, session lost) removes the hold and throws {@link java.util.ConcurrentModificationException}, the
 *       exception of Spring's Redis and JDBC registries, with Warden's {@code LockException} ({@code LOST}) as its
 *       cause: the critical section was not protected to its end. A release the server did not confirm throws
 *       {@link org.springframework.dao.DataAccessResourceFailureException} (the lock expires within its TTL).</li>
 *   <li>An acquisition Warden could not complete (the server unreachable through the wait and
 *       {@code warden.lock.outage-tolerance}, access denied, the client closed) throws
 *       {@link org.springframework.dao.CannotAcquireLockException} with Warden's {@code LockException} as its
 *       cause; nothing is left held.</li>
 *   <li>Conditions are not supported ({@link UnsupportedOperationException}).</li>
 * </ul>
 *
 * <p>Two {@code WardenLock}s are equal when they come from the same registry for the same {@linkplain #name() name}:
 * such locks share their holds, so an instance the registry's cache dropped still works.
 */
public interface WardenLock extends DistributedLock {

    /** The Warden lock name this lock's key maps to ({@link WardenLockRegistry#lockName(Object)}). */
    String name();

    /**
     * Whether the current thread has a hold of this lock (through this lock's registry) that it has not unlocked
     * yet, valid or not: {@code lease().isValid()} tells whether it may still rely on it.
     */
    boolean isHeldByCurrentThread();

    /**
     * The lease of the current thread's newest hold of this lock: its fencing token, whether it is still valid
     * (the moment of truth, false once lost), the time left, and a listener told when it is lost. Reentrant holds
     * share one lease, so they show the same token. Read-only: {@code release()}, {@code releaseAsync()},
     * {@code close()}, {@code releaseAfter(..)} and {@code setMaxHoldTime(..)} throw
     * {@link UnsupportedOperationException}, since the lock owns the hold: {@link #unlock()} ends it and
     * {@link WardenLockRegistry#renewLock(Object, Duration)} moves its limit. Hand the returned object to other
     * threads freely; it keeps describing that hold after the thread unlocks (then it reads invalid).
     *
     * @throws IllegalMonitorStateException when the current thread does not hold this lock
     */
    Lease lease();
}
