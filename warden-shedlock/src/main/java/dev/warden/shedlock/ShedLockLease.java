package dev.warden.shedlock;

import dev.warden.lock.Lease;
import dev.warden.shedlock.internal.Hold;
import dev.warden.shedlock.internal.WardenSimpleLock;
import net.javacrumbs.shedlock.core.SimpleLock;

import java.util.Optional;

/**
 * The Warden lease behind the ShedLock lock of the task running on this thread: what Warden adds to
 * ShedLock, read the way ShedLock's own {@code LockAssert} and {@code LockExtender} work, by thread.
 *
 * <pre>{@code
 * @Scheduled(cron = "0 0 2 * * *")
 * @SchedulerLock(name = "nightly-export", lockAtMostFor = "30m", lockAtLeastFor = "5m")
 * public void nightlyExport() {
 *     Lease lease = ShedLockLease.get();
 *     for (Batch batch : batches()) {
 *         if (!lease.isValid()) {
 *             return;                                       // lost: another node may run it now
 *         }
 *         store.write(lease.fencingToken(), batch);         // the store refuses older tokens
 *     }
 * }
 * }</pre>
 *
 * <p><b>Which lease.</b> A {@link WardenLockProvider} binds a lock's lease to the thread that took it, from
 * the grant until that lock is unlocked (or an extension fails). ShedLock's {@code LockingTaskExecutor},
 * which {@code @SchedulerLock} and {@code LockableRunnable} run on, takes the lock, runs the task and unlocks
 * it on one thread, so there {@link #get()} is the running task's lease, exactly while it runs; with nested
 * tasks, the innermost one's. An extension ({@code LockExtender.extendActiveLock}) keeps the same lease, with
 * its limit moved. Work the task hands to other threads does not see it through this class: hand them the
 * {@link Lease} itself, a value.
 *
 * <p><b>Read-only.</b> The lease returned reads and listens like any lease: {@code isValid()} (the moment of
 * truth: false once the lock is lost or its {@code lockAtMostFor} has passed), {@code fencingToken()},
 * {@code remaining()}, {@code onLost(...)}. It cannot end or move the hold: {@code release()},
 * {@code releaseAsync()}, {@code close()}, {@code releaseAfter(...)} and {@code setMaxHoldTime(...)} throw
 * {@link UnsupportedOperationException}, since ShedLock owns the lock: it ends when the task returns (after
 * its {@code lockAtLeastFor}), and {@code LockExtender} moves its limit.
 *
 * <p>Code that calls {@link WardenLockProvider#lock} itself has the {@link SimpleLock}: {@link #of(SimpleLock)}
 * gives its lease on any thread.
 */
public final class ShedLockLease {

    private ShedLockLease() {
    }

    /**
     * The lease of the innermost lock a {@link WardenLockProvider} took on this thread and has not unlocked:
     * the running task's.
     *
     * @throws IllegalStateException when this thread holds no such lock (the task is not run under a
     *         Warden-backed ShedLock lock)
     */
    public static Lease get() {
        return find().orElseThrow(() -> new IllegalStateException(
                "no ShedLock lock of a WardenLockProvider is held on this thread"));
    }

    /** The lease of the innermost lock a {@link WardenLockProvider} took on this thread, if one is held. */
    public static Optional<Lease> find() {
        return Hold.current().map(Hold::view);
    }

    /**
     * The lease behind {@code lock}, a lock a {@link WardenLockProvider} returned, while it is neither
     * unlocked nor extended (the lock an extension returned gives the same lease); empty otherwise, and for
     * another provider's locks.
     */
    public static Optional<Lease> of(SimpleLock lock) {
        return lock instanceof WardenSimpleLock warden ? warden.activeHold().map(Hold::view) : Optional.empty();
    }
}
