package dev.warden.examples.demo.support;

import dev.warden.lock.WardenSettings;
import picocli.CommandLine;

import java.time.Duration;
import java.util.Locale;

/** Durations on the command line, in Warden's one grammar ({@link WardenSettings#duration}). */
public final class DurationConverter implements CommandLine.ITypeConverter<Duration> {

    @Override
    public Duration convert(String value) {
        return parse(value);
    }

    /**
     * @throws CommandLine.TypeConversionException when {@code value} is not a duration
     */
    public static Duration parse(String value) {
        try {
            return WardenSettings.duration(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
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
