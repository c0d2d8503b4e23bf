package dev.warden.lock.etcd.internal;

import dev.warden.lock.LockException;
import io.etcd.jetcd.common.exception.ErrorCode;
import io.etcd.jetcd.common.exception.EtcdException;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Bounds every call the driver hands to lock-api by the request timeout (gRPC deadlines bound the
 * RPCs too, but a call may be queued behind a reconnect), completes results on the driver's own
 * threads rather than on gRPC or Vert.x threads, and turns errors into {@link LockException}s that
 * name the endpoints.
 *
 * <p>KV calls on the lock path ({@link #unary}) go straight to jetcd's gRPC channel: jetcd's own
 * KV client starts every call on its executor (Failsafe) and delivers every response through
 * gRPC's default executor, about ten thread hand-offs per call. Here the call starts on the calling
 * thread, its response is taken on the transport thread and handed once to the driver's threads,
 * and its gRPC deadline (waiting for a ready connection included) bounds it.
 */
final class Calls {

    /** Runs gRPC callbacks where they arrive; they only hand the result on. */
    private static final Executor DIRECT = Runnable::run;

    private final ScheduledExecutorService timers;
    private final Executor completions;
    private final Duration timeout;
    private final String endpoints;
    /** jetcd's channel, seen by the driver's interceptor on jetcd's first call. */
    private volatile Channel channel;

    Calls(ScheduledExecutorService timers, Executor completions, Duration timeout, String endpoints) {
        this.timers = timers;
        this.completions = completions;
        this.timeout = timeout;
        this.endpoints = endpoints;
    }

    Duration timeout() {
        return timeout;
    }

    /** Remembers the channel jetcd's calls go through; the first one seen stays. */
    void channelSeen(Channel c) {
        if (channel == null) {
            channel = c;
        }
    }

    /**
     * One unary call on jetcd's channel, bounded by the request timeout through its gRPC deadline
     * (which also covers waiting for a ready connection), completed on the driver's threads.
     */
    <Q, R> CompletableFuture<R> unary(String what, MethodDescriptor<Q, R> method, Q request) {
        CompletableFuture<R> result = new CompletableFuture<>();
        Channel c = channel;
        if (c == null) {
            result.completeExceptionally(new LockException(LockException.Reason.PROTOCOL,
                    "no etcd channel yet for " + what));
            return result;
        }
        try {
            ClientCall<Q, R> call = c.newCall(method, CallOptions.DEFAULT
                    .withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS)
                    .withWaitForReady()
                    .withExecutor(DIRECT));
            ClientCalls.asyncUnaryCall(call, request, new StreamObserver<R>() {
                private R value;

                @Override
                public void onNext(R v) {
                    value = v;
                }

                @Override
                public void onError(Throwable t) {
                    execute(() -> result.completeExceptionally(translate(what, t)));
                }

                @Override
                public void onCompleted() {
                    R v = value;
                    execute(() -> result.complete(v));
                }
            });
        } catch (RuntimeException e) {
            result.completeExceptionally(translate(what, e));
        }
        return result;
    }

    <T> CompletableFuture<T> bounded(String what, Supplier<? extends CompletableFuture<T>> call) {
        return bounded(what, timeout, call);
    }

    <T> CompletableFuture<T> bounded(String what, Duration limit, Supplier<? extends CompletableFuture<T>> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        CompletableFuture<T> started;
        try {
            started = call.get();
        } catch (RuntimeException e) {
            result.completeExceptionally(translate(what, e));
            return result;
        }
        ScheduledFuture<?> deadline = schedule(() -> result.completeExceptionally(new LockException(
                LockException.Reason.UNAVAILABLE, "etcd at " + endpoints + " did not answer " + what + " within "
                + limit.toMillis() + " ms")), limit.toNanos());
        started.whenComplete((value, error) -> {
            if (deadline != null) {
                deadline.cancel(false);
            }
            execute(() -> {
                if (error == null) {
                    result.complete(value);
                } else {
                    result.completeExceptionally(translate(what, error));
                }
            });
        });
        return result;
    }

    /** Schedules on the driver's timer; null once it is shut down. */
    ScheduledFuture<?> schedule(Runnable task, long delayNanos) {
        try {
            return timers.schedule(() -> execute(task), Math.max(0, delayNanos), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null;
        }
    }

    /** Runs on the driver's threads, or here once they are shut down. */
    void execute(Runnable task) {
        try {
            completions.execute(task);
        } catch (RejectedExecutionException e) {
            task.run();
        }
    }

    LockException translate(String what, Throwable error) {
        Throwable cause = unwrap(error);
        if (cause instanceof LockException e) {
            return e;
        }
        return new LockException(LockException.Reason.UNAVAILABLE,
                "etcd at " + endpoints + " failed " + what + ": " + cause.getMessage(), cause);
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Whether the server said the lease does not exist (expired or revoked). */
    static boolean leaseNotFound(Throwable error) {
        Throwable t = unwrap(error);
        while (t != null) {
            if (t instanceof EtcdException e && e.getErrorCode() == ErrorCode.NOT_FOUND
                    && String.valueOf(e.getMessage()).contains("lease not found")) {
                return true;
            }
            Status status = t instanceof StatusRuntimeException sre ? sre.getStatus()
                    : t instanceof StatusException se ? se.getStatus() : null;
            if (status != null && status.getCode() == Status.Code.NOT_FOUND
                    && String.valueOf(status.getDescription()).contains("lease not found")) {
                return true;
            }
            if (t instanceof LeaseGone) {
                return true;
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return false;
    }

    /** The lease of a session is gone on the server, or the session was lost locally. */
    static final class LeaseGone extends RuntimeException {
        private static final long serialVersionUID = 1L;

        LeaseGone(String message) {
            super(message, null, false, false);
        }
    }
}
