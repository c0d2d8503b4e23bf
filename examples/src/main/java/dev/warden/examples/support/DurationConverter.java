package dev.warden.examples.support;

import picocli.CommandLine;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations on the command line: {@code 500ms}, {@code 10s}, {@code 1.5s}, {@code 2m}, {@code 1h} or ISO-8601 ({@code PT10S}). */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    private static final Pattern SHORT = Pattern.compile("(\\d{1,9}(?:\\.\\d{1,3})?)(ms|s|m|h)");

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * @throws CommandLine.TypeConversionException when {@code value} is not a duration, or is negative
     */
    public static Duration parse(String value) {
        String text = value.trim().toLowerCase(Locale.ROOT);
        Matcher m = SHORT.matcher(text);
        Duration d;
        if (m.matches()) {
            double n = Double.parseDouble(m.group(1));
            long unitMillis = switch (m.group(2)) {
                case "ms" -> 1;
                case "s" -> 1_000;
                case "m" -> 60_000;
                default -> 3_600_000;
            };
            d = Duration.ofMillis(Math.round(n * unitMillis));
        } else {
            try {
                d = Duration.parse(value.trim());
            } catch (DateTimeParseException e) {
                throw new CommandLine.TypeConversionException("'" + value + "' is not a duration (write 500ms, 10s, 1.5s, 2m or PT10S)");
            }
        }
        if (d.isNegative()) {
            throw new CommandLine.TypeConversionException("'" + value + "' is negative");
        }
        return d;
    }

    /** {@code 1.5 s}, {@code 250 ms}, {@code 2 m 5 s}: for people. */
    public static String show(Duration d) {
        long ms = d.toMillis();
        if (ms < 1_000) {
            return ms + " ms";
        }
        if (ms < 60_000) {
            return (ms % 1000 == 0 ? Long.toString(ms / 1000) : String.format(Locale.ROOT, "%.1f", ms / 1000.0)) + " s";
        }
        return (ms / 60_000) + " m " + (ms % 60_000) / 1000 + " s";
    }
}
