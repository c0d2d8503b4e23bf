package dev.warden.lock.internal;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Where lease-lost listeners run: one daemon thread per client, in order, or the calling thread
 * ({@link #direct()}, for tests). Once shut down, tasks run on the caller. Concurrency: the executor
 * is thread-safe; {@link #RUNNING} is per thread.
 */
final class Events {

    /** Set while a task of any {@code Events} runs on this thread. */
    private static final ThreadLocal<Boolean> RUNNING = ThreadLocal.withInitial(() -> false);

    private final ExecutorService executor;

    private Events(ExecutorService executor) {
        this.executor = executor;
    }

    /** Tasks run on one daemon thread named {@code threadName}. */
    static Events onThread(String threadName) {
        return new Events(Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        }));
    }

    /** Tasks run on the thread that submits them. */
    static Events direct() {
        return new Events(null);
    }

    void execute(Runnable task) {
        Runnable marked = () -> {
            boolean outer = RUNNING.get();
            RUNNING.set(true);
            try {
                task.run();
            } finally {
                RUNNING.set(outer);
            }
        };
        if (executor == null) {
            marked.run();
            return;
        }
        try {
            executor.execute(marked);
        } catch (RejectedExecutionException shutDown) {
            marked.run();
        }
    }

    /** Whether the current thread is running an event task (a listener): waiting for events here would wait for itself. */
    boolean isEventTask() {
        return RUNNING.get();
    }

    void shutdown(Duration wait) throws InterruptedException {
        if (executor == null) {
            return;
        }
        executor.shutdown();
        if (!executor.awaitTermination(wait.toMillis(), TimeUnit.MILLISECONDS)) {
            executor.shutdownNow();
        }
    }
}
