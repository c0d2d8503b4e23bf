package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.LockException;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * {@link Lock} over a distributed lock. Holds belong to threads, as that interface requires, and
 * are kept by the client per name, so every view of one lock agrees on who holds it.
 */
final class LockAdapter implements Lock {

    private final DefaultLock lock;
    private final DefaultLockClient client;

    LockAdapter(DefaultLock lock, DefaultLockClient client) {
        this.lock = lock;
        this.client = client;
    }

    @Override
    public void lock() {
        push(lock.acquireBlocking(0, false, false).orElseThrow());
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            push(lock.acquire());
        } catch (LockException e) {
            throw asInterrupted(e);
        }
    }

    @Override
    public boolean tryLock() {
        return offer(lock.acquireBlocking(0, true, false));
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return offer(lock.tryAcquire(Duration.ofNanos(unit.toNanos(Math.max(0, time)))));
        } catch (LockException e) {
            throw asInterrupted(e);
        }
    }

    @Override
    public void unlock() {
        DefaultLockClient.ReentryKey key = new DefaultLockClient.ReentryKey(lock.name(), Thread.currentThread());
        Deque<Lease> mine = client.lockViewHolds().get(key);
        Lease lease = mine == null ? null : mine.poll();
        if (lease == null) {
            throw new IllegalMonitorStateException("the current thread does not hold lock '" + lock.name() + "'");
        }
        if (mine.isEmpty()) {
            client.lockViewHolds().remove(key);
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
        client.lockViewHolds()
                .computeIfAbsent(new DefaultLockClient.ReentryKey(lock.name(), Thread.currentThread()), k -> new ArrayDeque<>())
                .push(lease);
    }

    private static InterruptedException asInterrupted(LockException e) throws LockException {
        if (e.reason() != LockException.Reason.INTERRUPTED) {
            throw e;
        }
        Thread.interrupted();
        InterruptedException ie = new InterruptedException(e.getMessage());
        ie.initCause(e);
        return ie;
    }
}
