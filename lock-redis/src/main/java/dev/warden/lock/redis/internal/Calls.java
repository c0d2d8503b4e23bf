package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import io.lettuce.core.RedisCommandExecutionException;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.concurrent.EventExecutorGroup;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Bounds what the driver hands to lock-api. A call may take several commands (subscribe then
 * acquire; NOSCRIPT, load, retry), each bounded by Lettuce, so the whole is bounded again by the
 * request timeout, on Lettuce's hashed-wheel timer: arming and cancelling it wakes no thread, which
 * matters when every lock operation arms one. Results complete on the thread that received the
 * reply, where lock-api's non-blocking continuations run (its asynchronous callers' continuations
 * hop to Warden's callback threads). Errors become {@link LockException}s that name the endpoint.
 */
final class Calls {

    /** Server errors that mean "not now" rather than "this cannot work". */
    private static final Set<String> TRANSIENT = Set.of("OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN",
            "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS");

    private final EventExecutorGroup executors;
    private final Timer timer;
    private final Duration timeout;
    private final String endpoint;

    Calls(EventExecutorGroup executors, Timer timer, Duration timeout, String endpoint) {
        this.executors = executors;
        this.timer = timer;
        this.timeout = timeout;
        this.endpoint = endpoint;
    }

    <T> CompletableFuture<T> bounded(String what, CompletionStage<T> call) {
        return bounded(what, call, late -> { });
    }

    /**
     * @param late told of a result that arrived after the deadline had already failed the call, so
     *        the caller can undo it (a grant nobody will see)
     */
    <T> CompletableFuture<T> bounded(String what, CompletionStage<T> call, Consumer<T> late) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Timeout deadline = arm(() -> result.completeExceptionally(new LockException(
                LockException.Reason.UNAVAILABLE, "Redis at " + endpoint + " did not answer " + what + " within "
                + timeout.toMillis() + " ms")));
        call.whenComplete((value, error) -> {
            if (deadline != null) {
                deadline.cancel();
            }
            boolean completed = error == null ? result.complete(value) : result.completeExceptionally(translate(what, error));
            if (!completed && error == null) {
                late.accept(value);
            }
        });
        return result;
    }

    private Timeout arm(Runnable expire) {
        try {
            return timer.newTimeout(t -> expire.run(), timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (IllegalStateException stopped) {
            // The timer stops with the client; Lettuce's own command timeout still bounds the call.
            return null;
        }
    }

    /** Schedules on the driver's executors; null once they are shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delay, TimeUnit unit) {
        try {
            return executors.schedule(task, delay, unit);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Runs on the driver's executors, or here once they are shut down. */
    void execute(Runnable task) {
        try {
            executors.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    LockException translate(String what, Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockException e) {
            return e;
        }
        String message = "Redis at " + endpoint + " failed " + what + ": " + cause.getMessage();
        if (cause instanceof RedisCommandExecutionException e && !TRANSIENT.contains(code(e))) {
            return new LockException(LockException.Reason.PROTOCOL, message, cause);
        }
        return new LockException(LockException.Reason.UNAVAILABLE, message, cause);
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String code(RedisCommandExecutionException e) {
        String message = e.getMessage() == null ? "" : e.getMessage();
        int space = message.indexOf(' ');
        return space < 0 ? message : message.substring(0, space);
    }
}
