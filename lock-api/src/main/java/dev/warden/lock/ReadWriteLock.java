package dev.warden.lock;

/**
 * A read-write lock by name: many readers at once, or one writer, across clients. Both sides are
 * {@link DistributedLock}s with leases like a lock's.
 *
 * <p>Policy: arrival order on the server. A reader is granted when no writer is ahead of it, held or
 * waiting; a writer when nobody is ahead of it. So a waiting writer holds back every reader that arrives
 * after it, and writers are not starved by a continuous stream of readers: a writer waits at most for the
 * holds granted before it arrived to end (each bounded by its lease). Readers arriving while a writer
 * waits wait for that writer.
 *
 * <p>Fencing: every grant has its own token, and a writer's token exceeds the token of every reader
 * granted before it, and every later grant's token exceeds the writer's; a resource that remembers the
 * highest token it has seen refuses a stale reader's write-back after a writer.
 *
 * <p>Reentrancy: blocking acquisitions of one side by a thread that holds that side join its hold, as
 * for a lock. A thread that holds one side and asks for the other (upgrade or downgrade) would wait for
 * itself in arrival order, and gets {@link IllegalStateException} instead.
 */
public interface ReadWriteLock {

    /** The name, as given. */
    String name();

    /** The shared side. */
    DistributedLock readLock();

    /** The exclusive side. */
    DistributedLock writeLock();
}
