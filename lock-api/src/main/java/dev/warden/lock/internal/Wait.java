package dev.warden.lock.internal;

import dev.warden.lock.internal.config.Durations;

import java.time.Duration;

/** How long an acquisition may wait for its lock: for ever, or up to a limit (zero: try once). */
sealed interface Wait permits Wait.Forever, Wait.UpTo {

    /** No limit (a blocking {@code acquire()}, an {@code acquireAsync()}). */
    record Forever() implements Wait {
    }

    /** At most {@code nanos}. */
    record UpTo(long nanos) implements Wait {
    }

    Wait FOREVER = new Forever();

    /** Far enough for any wait, near enough that adding it to a nanoTime never overflows. */
    long LONGEST_NANOS = Long.MAX_VALUE / 4;

    static Wait upTo(Duration limit) {
        return new UpTo(Math.min(LONGEST_NANOS, Durations.toNanosSaturated(limit)));
    }
}
