package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What one client holds and waits for: its held locks (to release them on close, and to find a
 * thread's lock again for reentrancy), its pending acquisitions (to stop them on close), and the
 * holds of its {@link java.util.concurrent.locks.Lock} views.
 *
 * <p>Concurrency: every field is a concurrent collection or atomic, so no lock guards them; a
 * {@link java.util.concurrent.locks.Lock} view's deque is only touched by the thread it is keyed
 * by.
 */
final class Registry {

    /** A hold key ({@link HoldKeys}) and the thread holding it. */
    record ReentryKey(String name, Thread thread) {
    }

    private final Set<HeldLock> held = ConcurrentHashMap.newKeySet();
    private final Set<Acquisition> pending = ConcurrentHashMap.newKeySet();
    private final Map<ReentryKey, HeldLock> byThread = new ConcurrentHashMap<>();
    private final Map<ReentryKey, Deque<Lease>> lockViewHolds = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    boolean isClosed() {
        return closed.get();
    }

    /** Marks the client closed; true only for the first call. */
    boolean close() {
        return closed.compareAndSet(false, true);
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new LockException(LockException.Reason.CLOSED, "the lock client is closed");
        }
    }

    /** The lock the current thread already holds under {@code holdKey}, with one more hold, or null. */
    HeldLock reenter(String holdKey) {
        HeldLock h = byThread.get(new ReentryKey(holdKey, Thread.currentThread()));
        return h != null && h.tryReenter() ? h : null;
    }

    /** Whether the current thread holds something under {@code holdKey}. */
    boolean holdsOnThisThread(String holdKey) {
        HeldLock h = byThread.get(new ReentryKey(holdKey, Thread.currentThread()));
        return h != null && h.isHeld();
    }

    void addPending(Acquisition a) {
        pending.add(a);
    }

    void removePending(Acquisition a) {
        pending.remove(a);
    }

    List<Acquisition> pending() {
        return List.copyOf(pending);
    }

    /** Records a new hold; a client closed meanwhile releases it at once. */
    void remember(HeldLock h) {
        held.add(h);
        if (h.reentryThread() != null) {
            byThread.put(new ReentryKey(h.holdKey(), h.reentryThread()), h);
        }
        if (closed.get()) {
            Release.inBackground(h, HeldLock.Releaser.CLOSING_CLIENT);
        }
    }

    void forget(HeldLock h) {
        held.remove(h);
        if (h.reentryThread() != null) {
            byThread.remove(new ReentryKey(h.holdKey(), h.reentryThread()), h);
        }
    }

    List<HeldLock> held() {
        return List.copyOf(held);
    }

    /** The current thread's {@code Lock}-view holds of {@code name}, newest first. */
    Deque<Lease> lockViewHolds(String name) {
        return lockViewHolds.computeIfAbsent(new ReentryKey(name, Thread.currentThread()), k -> new ArrayDeque<>());
    }

    /** Removes and returns the current thread's newest {@code Lock}-view hold of {@code name}, or null. */
    Lease takeLockViewHold(String name) {
        ReentryKey key = new ReentryKey(name, Thread.currentThread());
        Deque<Lease> mine = lockViewHolds.get(key);
        Lease lease = mine == null ? null : mine.poll();
        if (mine != null && mine.isEmpty()) {
            lockViewHolds.remove(key);
        }
        return lease;
    }
}
