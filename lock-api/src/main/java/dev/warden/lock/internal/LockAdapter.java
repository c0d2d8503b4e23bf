package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** {@link Lock} over a distributed lock; holds belong to threads, as that interface requires. */
final class LockAdapter implements Lock {

    private final DefaultLock lock;
    private final Map<Thread, Deque<Lease>> holds = new ConcurrentHashMap<>();

    LockAdapter(DefaultLock lock) {
        this.lock = lock;
    }

    @Override
    public void lock() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    push(lock.acquire());
                    return;
                } catch (LockException e) {
                    if (e.reason() != LockException.Reason.INTERRUPTED) {
                        throw e;
                    }
                    // lock() is not interruptible: clear the flag, keep waiting, restore it after.
                    Thread.interrupted();
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            push(lock.acquire());
        } catch (LockException e) {
            if (e.reason() == LockException.Reason.INTERRUPTED) {
                Thread.interrupted();
                InterruptedException ie = new InterruptedException(e.getMessage());
                ie.initCause(e);
                throw ie;
            }
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        return offer(lock.tryAcquire(Duration.ZERO));
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return offer(lock.tryAcquire(Duration.ofNanos(unit.toNanos(Math.max(0, time)))));
        } catch (LockException e) {
            if (e.reason() == LockException.Reason.INTERRUPTED) {
                Thread.interrupted();
                InterruptedException ie = new InterruptedException(e.getMessage());
                ie.initCause(e);
                throw ie;
            }
            throw e;
        }
    }

    @Override
    public void unlock() {
        Deque<Lease> mine = holds.get(Thread.currentThread());
        if (mine == null || mine.isEmpty()) {
            throw new IllegalMonitorStateException("the current thread does not hold lock '" + lock.name() + "'");
        }
        Lease lease = mine.pop();
        if (mine.isEmpty()) {
            holds.remove(Thread.currentThread());
        }
        lease.close();
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("distributed locks do not support conditions");
    }

    private boolean offer(Optional<Lease> lease) {
        lease.ifPresent(this::push);
        return lease.isPresent();
    }

    private void push(Lease lease) {
        holds.computeIfAbsent(Thread.currentThread(), t -> new ArrayDeque<>()).push(lease);
    }
}
