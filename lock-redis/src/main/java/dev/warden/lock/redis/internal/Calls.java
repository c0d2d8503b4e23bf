package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.redis.internal.RedisFailures;
import dev.warden.redis.internal.RetryWhileRefused;
import io.lettuce.core.RedisCommandExecutionException;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import io.netty.util.concurrent.EventExecutorGroup;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Bounds what the driver hands to lock-api. A call may take several commands (subscribe then
 * acquire; EVALSHA, then EVAL after NOSCRIPT; retries), each bounded by Lettuce, so the whole is
 * bounded again by the request timeout, on Lettuce's hashed-wheel timer: arming and cancelling it
 * wakes no thread, which matters when every lock operation arms one. A script the server refused
 * before it ran (a missing script, a slot being migrated, a cluster or replica not ready, a node
 * still loading, a primary just demoted) is sent again after a short backoff until the deadline, so a
 * failover, a resharding or a storm of SCRIPT FLUSH costs time, not the call. Results complete on the
 * thread that received the reply, where lock-api's non-blocking continuations run (its asynchronous
 * callers' continuations hop to Warden's callback threads). Errors become {@link LockException}s that
 * name the endpoint; a missing script or a refusal is {@code UNAVAILABLE}, never {@code PROTOCOL}.
 *
 * <p>Concurrency: immutable; each call's state lives in its own futures.
 */
final class Calls {

    /** Server errors that mean "not now" rather than "this cannot work". */
    private static final Set<String> TRANSIENT = Set.of("OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN",
            "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS", "NOSCRIPT", "MOVED", "ASK");

    private final EventExecutorGroup executors;
    private final Timer timer;
    private final Duration timeout;
    private final String endpoint;
    private final boolean retryUnsent;

    /**
     * @param retryUnsent also send again a command rejected unsent while its connection was being made:
     *        a Cluster client connects to a node when the first command for its slots comes, and to a
     *        promoted replica after a failover; one server's client fails such calls at once instead
     */
    Calls(EventExecutorGroup executors, Timer timer, Duration timeout, String endpoint, boolean retryUnsent) {
        this.executors = executors;
        this.timer = timer;
        this.timeout = timeout;
        this.endpoint = endpoint;
        this.retryUnsent = retryUnsent;
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

    /**
     * Runs {@code call}, and runs it again while the server refuses it before it ran
     * ({@link RetryWhileRefused}), until the request timeout, on the client's timer.
     *
     * @param late told of a result that arrived after the deadline had already failed the call
     */
    <T> CompletableFuture<T> retrying(String what, Supplier<CompletableFuture<T>> call, Consumer<T> late) {
        CompletableFuture<T> result = new CompletableFuture<>();
        AtomicReference<Throwable> refusal = new AtomicReference<>();
        Timeout expiry = arm(() -> {
            Throwable last = refusal.get();
            result.completeExceptionally(new LockException(LockException.Reason.UNAVAILABLE, "Redis at " + endpoint
                    + " did not answer " + what + " within " + timeout.toMillis() + " ms"
                    + (last == null ? "" : "; it kept refusing: " + RedisFailures.unwrap(last).getMessage()), last));
        });
        RetryWhileRefused.run(n -> call.get(), retryUnsent, System.nanoTime() + timeout.toNanos(),
                (task, delayNanos) -> !result.isDone() && arm(task, delayNanos) != null, refusal::set)
                .whenComplete((value, error) -> {
                    cancel(expiry);
                    if (error != null) {
                        result.completeExceptionally(translate(what, error));
                    } else if (!result.complete(value)) {
                        late.accept(value);
                    }
                });
        return result;
    }

    private static void cancel(Timeout t) {
        if (t != null) {
            t.cancel();
        }
    }

    private Timeout arm(Runnable expire, long delayNanos) {
        try {
            return timer.newTimeout(t -> expire.run(), delayNanos, TimeUnit.NANOSECONDS);
        } catch (IllegalStateException stopped) {
            return null;
        }
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
        Throwable cause = RedisFailures.unwrap(error);
        if (cause instanceof LockException e) {
            return e;
        }
        String message = "Redis at " + endpoint + " failed " + what + ": " + cause.getMessage();
        String denied = RedisFailures.denial(error);
        if (denied != null) {
            return accessDenied(endpoint, what, denied, cause);
        }
        if (cause instanceof RedisCommandExecutionException e && !TRANSIENT.contains(RedisFailures.code(e))) {
            return new LockException(LockException.Reason.PROTOCOL, message, cause);
        }
        return new LockException(LockException.Reason.UNAVAILABLE, message, cause);
    }

    /** {@code ACCESS_DENIED} naming the endpoint and what the server said (which holds no secret). */
    static LockException accessDenied(String endpoint, String what, String denial, Throwable cause) {
        String hint = denial.startsWith("NOPERM")
                ? "the ACL user lacks a command, key or channel Warden needs (see docs/security.md#the-minimal-acl-for-a-lock-only-user)"
                : "check the user name and password (warden.lock.redis.username, password, password-file or password-env,"
                        + " or the endpoint's user-info)";
        return new LockException(LockException.Reason.ACCESS_DENIED, "Redis at " + endpoint + " refused " + what + ": "
                + denial + "; " + hint, cause);
    }
}
