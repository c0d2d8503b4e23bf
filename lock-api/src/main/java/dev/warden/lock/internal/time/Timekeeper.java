package dev.warden.lock.internal.time;

import java.time.Instant;

/**
 * The one place lock-api reads time and arms timers: validity deadlines, renewal and expiry timers,
 * acquisition deadlines and retry backoffs all go through it. Production uses the system's
 * ({@link SystemTimekeeper}); tests inject a virtual clock they advance, so the timing rules are
 * proven in milliseconds of real time.
 */
public interface Timekeeper {

    /** The monotonic clock, in nanoseconds; only differences mean anything (like {@link System#nanoTime()}). */
    long nanoTime();

    /** The wall clock, for the estimates the API shows ({@code expiresAt}, {@code lastValidAt}). */
    Instant now();

    /**
     * Runs {@code task} once, {@code delayNanos} from now (at once when not positive), on the
     * keeper's thread. Tasks must not block. After the timekeeper is shut down the task never runs.
     */
    Alarm schedule(Runnable task, long delayNanos);

    /** An armed timer. */
    interface Alarm {

        /** Disarms it; a task already running finishes. Idempotent. */
        void cancel();

        /** An alarm that never rings, for a timekeeper that has shut down. */
        Alarm NONE = () -> { };
    }
}
