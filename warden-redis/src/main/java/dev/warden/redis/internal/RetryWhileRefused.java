package dev.warden.redis.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * Sends a call again while the server refuses it before running it ({@link RedisFailures#refusedBeforeRunning}:
 * a slot being migrated, a cluster or replica not ready, a node still loading, a primary just demoted),
 * with a doubling backoff from {@value #FIRST_RETRY_MILLIS} ms to {@value #MAX_RETRY_MILLIS} ms, until a
 * deadline: a failover or a resharding costs time, not the call. Every Warden script declares its flags,
 * so the server refuses it before it starts or runs it whole; sending it again cannot apply it twice.
 * What is still refused at the deadline fails with the server's last error.
 */
public final class RetryWhileRefused {

    public static final long FIRST_RETRY_MILLIS = 5;
    public static final long MAX_RETRY_MILLIS = 100;

    /** Runs a task after a delay; false when it cannot (its timer stopped with the client). */
    @FunctionalInterface
    public interface Delay {
        boolean schedule(Runnable task, long delayNanos);

        /** On the common pool's delayed executor. */
        static Delay common() {
            return (task, nanos) -> {
                CompletableFuture.delayedExecutor(nanos, TimeUnit.NANOSECONDS).execute(task);
                return true;
            };
        }
    }

    private RetryWhileRefused() {
    }

    /**
     * @param call          the call's attempt number (0 for the first) to that attempt
     * @param retryUnsent   also send again a command rejected unsent while its connection was being made
     *                      (a Cluster client connects to a node when the first command for its slots comes)
     * @param deadlineNanos when to stop sending again, on {@link System#nanoTime()}'s scale
     * @param onRefusal     told of each refusal that will be retried
     */
    public static <T> CompletableFuture<T> run(IntFunction<CompletableFuture<T>> call, boolean retryUnsent,
                                               long deadlineNanos, Delay delay, Consumer<Throwable> onRefusal) {
        CompletableFuture<T> result = new CompletableFuture<>();
        attempt(call, 0, FIRST_RETRY_MILLIS, retryUnsent, deadlineNanos, delay, onRefusal, result);
        return result;
    }

    private static <T> void attempt(IntFunction<CompletableFuture<T>> call, int n, long backoffMillis, boolean retryUnsent,
                                    long deadlineNanos, Delay delay, Consumer<Throwable> onRefusal, CompletableFuture<T> result) {
        CompletableFuture<T> sent;
        try {
            sent = call.apply(n);
        } catch (RuntimeException e) {
            sent = CompletableFuture.failedFuture(e);
        }
        sent.whenComplete((value, error) -> {
            if (error == null) {
                result.complete(value);
                return;
            }
            long left = deadlineNanos - System.nanoTime();
            if (RedisFailures.refusedBeforeRunning(error, retryUnsent) && !result.isDone()
                    && left > TimeUnit.MILLISECONDS.toNanos(backoffMillis)) {
                onRefusal.accept(error);
                if (delay.schedule(() -> attempt(call, n + 1, Math.min(2 * backoffMillis, MAX_RETRY_MILLIS), retryUnsent,
                        deadlineNanos, delay, onRefusal, result), TimeUnit.MILLISECONDS.toNanos(backoffMillis))) {
                    return;
                }
            }
            result.completeExceptionally(RedisFailures.unwrap(error));
        });
    }
}
