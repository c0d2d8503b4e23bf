package dev.warden.lock.internal;

import dev.warden.lock.LockException;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;

/**
 * An acquisition's run of failed calls: since when, the last error, and the pause before its next
 * try. Backoff doubles from {@link #FIRST_BACKOFF} to {@link #MAX_BACKOFF}, each pause drawn
 * between half and all of it so waiters of many clients do not retry in step, and never runs past
 * the tolerance: the try at its end is the last.
 *
 * <p>Concurrency: none of its own; its acquisition's monitor guards it.
 */
final class Outage {

    static final Duration FIRST_BACKOFF = Duration.ofMillis(50);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(1);

    private final Duration tolerance;
    private final long toleranceNanos;
    private boolean ongoing;
    private long sinceNanos;
    private int failures;
    private Throwable lastError;

    Outage(Duration tolerance) {
        this.tolerance = tolerance;
        this.toleranceNanos = tolerance.toNanos();
    }

    /** Records a failed call at {@code now}; whether the tolerance allows another try. */
    boolean failed(long now, Throwable error) {
        if (!ongoing) {
            ongoing = true;
            sinceNanos = now;
            failures = 0;
        }
        failures++;
        lastError = error;
        return now - sinceNanos - toleranceNanos < 0;
    }

    /** The server answered: the outage, if any, is over. */
    void recovered() {
        ongoing = false;
        lastError = null;
    }

    boolean isOngoing() {
        return ongoing;
    }

    Throwable lastError() {
        return lastError;
    }

    /** How long the current outage has lasted at {@code now}. */
    Duration length(long now) {
        return ongoing ? Duration.ofNanos(now - sinceNanos) : Duration.ZERO;
    }

    /** The pause before the next try, after {@link #failed} allowed one. */
    long backoffNanos(long now) {
        long full = FIRST_BACKOFF.toNanos() << Math.min(failures - 1, 20);
        full = Math.min(full, MAX_BACKOFF.toNanos());
        long pause = full / 2 + ThreadLocalRandom.current().nextLong(full / 2 + 1);
        // Called only while the tolerance allows a try, so untilEnd > 0: the last try lands exactly at the
        // tolerance's end, even when that is less than a millisecond away (a floor of 1 ms put it past the
        // end, where the outage had to be given up without it).
        long untilEnd = sinceNanos + toleranceNanos - now;
        return Math.max(1, Math.min(pause, untilEnd));
    }

    /** {@code UNAVAILABLE}, saying how long the outage lasted when one is under way. */
    LockException unavailable(String what, Throwable cause, long now) {
        String how = ongoing ? " (unreachable for the last " + length(now).toMillis() + " ms, outage tolerance "
                + tolerance.toMillis() + " ms)" : "";
        return new LockException(LockException.Reason.UNAVAILABLE, what + how + ": "
                + (cause == null ? "unknown error" : cause.getMessage()), cause);
    }

    /** Whether a failure says the server could not be reached or did not answer: worth another try. */
    static boolean isOutage(Throwable cause) {
        if (cause instanceof LockException e) {
            return e.reason() == LockException.Reason.UNAVAILABLE;
        }
        return cause instanceof IOException || cause instanceof TimeoutException;
    }

    static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
