package dev.warden.lock.internal.time;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The system's clocks and one daemon keeper thread per client. Concurrency: the executor is
 * thread-safe; this class has no other state.
 */
public final class SystemTimekeeper implements Timekeeper {

    private final ScheduledThreadPoolExecutor keeper;

    /** Starts the keeper thread, named {@code threadName}. */
    public SystemTimekeeper(String threadName) {
        keeper = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
        // Most alarms are cancelled (a lease released before its renewal): do not keep them queued.
        keeper.setRemoveOnCancelPolicy(true);
    }

    @Override
    public long nanoTime() {
        return System.nanoTime();
    }

    @Override
    public Instant now() {
        return Instant.now();
    }

    @Override
    public Alarm schedule(Runnable task, long delayNanos) {
        try {
            ScheduledFuture<?> f = keeper.schedule(task, Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
            return () -> f.cancel(false);
        } catch (RejectedExecutionException shutDown) {
            return Alarm.NONE;
        }
    }

    /** Stops the keeper thread: pending alarms never ring; waits up to {@code wait} for a running one. */
    public void shutdown(Duration wait) throws InterruptedException {
        keeper.shutdownNow();
        keeper.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS);
    }
}
