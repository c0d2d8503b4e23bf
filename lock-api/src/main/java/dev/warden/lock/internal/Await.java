package dev.warden.lock.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Blocking on a future, the few ways lock-api does it, with the interrupt flag always restored.
 * Limits are real time: a blocked thread waits on the system's clock, whatever the client's
 * timekeeper says.
 */
final class Await {

    private Await() {
    }

    /**
     * Waits for {@code f} through interrupts (re-asserted before returning): for work that must
     * finish once started, such as a release, or the clean-up of a stopped acquisition.
     */
    static <T> T uninterruptibly(CompletableFuture<T> f, Duration limit) throws ExecutionException, TimeoutException {
        boolean interrupted = false;
        long deadline = System.nanoTime() + limit.toNanos();
        try {
            while (true) {
                try {
                    return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Like {@link #uninterruptibly(CompletableFuture, Duration)}, with no limit. */
    static <T> T uninterruptibly(CompletableFuture<T> f) throws ExecutionException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits up to {@code limit} for {@code f} to complete, normally or not; stops early, flag
     * restored, when interrupted. For best-effort waits such as closing a client.
     */
    static void quietly(CompletableFuture<?> f, Duration limit) {
        try {
            f.get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException | java.util.concurrent.CancellationException ignored) {
            // Best effort: the caller reports what it must.
        }
    }
}
