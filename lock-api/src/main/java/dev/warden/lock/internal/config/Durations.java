package dev.warden.lock.internal.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses durations written as {@code 500ms}, {@code 30s}, {@code 2m}, {@code 1h} or ISO-8601. */
public final class Durations {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

    private Durations() {
    }

    /** @throws IllegalArgumentException when the text is not a duration */
    public static Duration parse(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = SHORT.matcher(t);
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofHours(n);
            };
        }
        try {
            return Duration.parse(text.trim());
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("'" + text + "' is not a duration (write 500ms, 30s, 2m, 1h or PT30S)");
        }
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
