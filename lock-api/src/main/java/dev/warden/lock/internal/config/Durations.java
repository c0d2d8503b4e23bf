package dev.warden.lock.internal.config;

import dev.warden.lock.WardenSettings;

import java.time.Duration;

/** Durations in settings: the one grammar ({@link WardenSettings#duration}), and checks on them. */
public final class Durations {

    private Durations() {
    }

    /** @throws IllegalArgumentException when the text is not a duration */
    public static Duration parse(String text) {
        return WardenSettings.duration(text);
    }

    /** @throws IllegalArgumentException when {@code d} is null or negative */
    public static Duration requireNonNegative(Duration d, String what) {
        if (d == null) {
            throw new IllegalArgumentException(what + " must not be null");
        }
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, was " + d);
        }
        return d;
    }

    /** Nanoseconds, saturating instead of overflowing for very long durations. */
    public static long toNanosSaturated(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return d.isNegative() ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }
}
