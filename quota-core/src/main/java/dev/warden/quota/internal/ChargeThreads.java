package dev.warden.quota.internal;

import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's charge threads ({@code warden.quota.charge-threads}): where {@code chargeAsync} takes the lock, prices
 * and deducts, since those block. Created on first use; idle threads end after {@value #IDLE_SECONDS} s. Tasks beyond
 * the threads wait in order. Daemon threads, so an engine left open does not keep a JVM alive.
 *
 * <p>Thread-safe: the pool is made once under this object's monitor; the executor is thread-safe.
 */
final class ChargeThreads implements AutoCloseable {

    static final long IDLE_SECONDS = 30;

    /** A charge thread's work, whose callers are answered ({@link #abandon}) if the engine closes before it runs. */
    interface Task extends Runnable {
        /** Answers the task's callers: the engine closed, nothing was sent. */
        void abandon();
    }

    private static final AtomicInteger POOLS = new AtomicInteger();

    private final int threads;
    /** Guarded by this; null until the first task. */
    private ThreadPoolExecutor pool;
    /** Guarded by this. */
    private boolean closed;

    ChargeThreads(int threads) {
        this.threads = threads;
    }

    /** Runs {@code task} on a charge thread, or abandons it when closed. */
    void execute(Task task) {
        try {
            pool().execute(task);
        } catch (RejectedExecutionException e) {
            task.abandon();
        }
    }

    private synchronized ThreadPoolExecutor pool() {
        if (closed) {
            throw new RejectedExecutionException("the charge threads are closed");
        }
        if (pool == null) {
            int id = POOLS.incrementAndGet();
            AtomicInteger n = new AtomicInteger();
            ThreadFactory named = r -> {
                Thread t = new Thread(r, "warden-quota-charge-" + id + "-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            };
            pool = new ThreadPoolExecutor(threads, threads, IDLE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), named);
            pool.allowCoreThreadTimeOut(true);
        }
        return pool;
    }

    /** Interrupts the running tasks and abandons those not started. */
    @Override
    public void close() {
        ThreadPoolExecutor p;
        synchronized (this) {
            closed = true;
            p = pool;
        }
        List<Runnable> waiting = p == null ? List.of() : p.shutdownNow();
        for (Runnable r : waiting) {
            ((Task) r).abandon();
        }
    }
}
