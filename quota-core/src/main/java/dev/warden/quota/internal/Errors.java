package dev.warden.quota.internal;

import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.redis.RedisRefusal;
import dev.warden.redis.internal.RedisFailures;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;

/** Turns what Lettuce and Redis report into {@link QuotaException}s that name the endpoint, on the caller's threads. */
final class Errors {

    /** Server errors that mean "not now" rather than "this cannot work". */
    private static final Set<String> TRANSIENT = Set.of("LOADING", "BUSY", "READONLY", "MASTERDOWN", "TRYAGAIN",
            "CLUSTERDOWN", "NOREPLICAS", "NOSCRIPT");

    private Errors() {
    }

    /** Our own exceptions (typed outcomes that are errors, invalid ids) pass unchanged. */
    static RuntimeException translate(String endpoint, String what, Throwable error) {
        Throwable cause = RedisFailures.unwrap(error);
        if (cause instanceof QuotaException || cause instanceof IllegalArgumentException) {
            return (RuntimeException) cause;
        }
        String message = "Redis at " + endpoint + " failed " + what + ": " + cause.getMessage();
        String refusal = RedisFailures.denial(cause);
        if (refusal != null) {
            return RedisRefusal.accessDenied(endpoint, what, refusal, cause);
        }
        if (cause instanceof RedisCommandExecutionException e) {
            String code = RedisFailures.code(e);
            if (code.equals("OOM")) {
                return new QuotaException(Reason.OUT_OF_MEMORY, "Redis at " + endpoint + " is over its maxmemory and"
                        + " refused " + what + " before it started; nothing changed", cause);
            }
            return new QuotaException(TRANSIENT.contains(code) ? Reason.UNAVAILABLE : Reason.PROTOCOL, message, cause);
        }
        if (cause instanceof RedisCommandTimeoutException) {
            return new QuotaException(Reason.UNAVAILABLE, "Redis at " + endpoint + " did not answer " + what
                    + " in time; it may still run: retry with the same request id", cause);
        }
        if (cause instanceof RedisException || cause instanceof IOException) {
            return new QuotaException(Reason.UNAVAILABLE, message, cause);
        }
        return new QuotaException(Reason.PROTOCOL, message, cause);
    }

    /**
     * Waits up to {@code waitNanos} for a call to Redis: an interrupt, a timeout or a failure becomes the
     * matching {@link QuotaException}, saying that the call may still run and how to retry it.
     */
    static <T> T await(CompletableFuture<T> call, long waitNanos, String endpoint, String what) {
        try {
            return call.get(waitNanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            throw QuotaException.interrupted("interrupted while waiting for Redis at " + endpoint + " to " + what
                    + "; it may still run: retry with the same request id", e);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new QuotaException(QuotaException.Reason.UNAVAILABLE, "Redis at " + endpoint + " did not answer " + what
                    + " in time; it may still run: retry with the same request id", e);
        } catch (ExecutionException e) {
            throw translate(endpoint, what, e.getCause());
        }
    }

    /** {@code call}'s outcome on {@code completions} (never a Netty I/O thread), its error translated. */
    static <T> CompletionStage<T> completeOn(Executor completions, CompletableFuture<T> call, String endpoint,
                                             String what) {
        CompletableFuture<T> result = new CompletableFuture<>();
        call.whenComplete((value, error) -> {
            Runnable complete = () -> {
                if (error == null) {
                    result.complete(value);
                } else {
                    result.completeExceptionally(translate(endpoint, what, error));
                }
            };
            try {
                completions.execute(complete);
            } catch (RuntimeException rejected) {
                complete.run();
            }
        });
        return result;
    }
}
