package dev.warden.lock.settings;

import dev.warden.lock.WardenSettings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * One setting, declared once: its full key, how its text is read, its default, and what it means. A
 * {@link SettingTable} of them reads a settings map, reports every problem, and writes the reference
 * documentation, so the code, the documentation and the checks cannot drift apart. Immutable.
 *
 * @param <T> the value's type
 */
public final class Setting<T> {

    private final String key;
    private final String doc;
    private final Function<String, T> parser;
    private final T defaultValue;
    private final String shownDefault;
    private final boolean required;
    private final String requiredHint;
    private final boolean secret;
    private final List<Check<T>> checks;

    private record Check<T>(Predicate<T> ok, Function<T, String> problem) {
    }

    private Setting(String key, String doc, Function<String, T> parser, T defaultValue, String shownDefault,
                    boolean required, String requiredHint, boolean secret, List<Check<T>> checks) {
        this.key = Objects.requireNonNull(key, "key");
        this.doc = Objects.requireNonNull(doc, "doc");
        this.parser = parser;
        this.defaultValue = defaultValue;
        this.shownDefault = shownDefault;
        this.required = required;
        this.requiredHint = requiredHint;
        this.secret = secret;
        this.checks = List.copyOf(checks);
    }

    /** A duration in Warden's one grammar ({@link WardenSettings#duration}); {@code fallback} null for none. */
    public static Setting<Duration> duration(String key, Duration fallback, String doc) {
        return new Setting<>(key, doc, WardenSettings::duration, fallback, fallback == null ? "none" : shown(fallback),
                false, null, false, List.of());
    }

    /** Free text, trimmed; {@code fallback} null for none. */
    public static Setting<String> text(String key, String fallback, String doc) {
        return new Setting<>(key, doc, t -> t, fallback, fallback == null ? "none" : fallback.isEmpty() ? "empty" : fallback,
                false, null, false, List.of());
    }

    /** A whole number within {@code min..max}. */
    public static Setting<Integer> whole(String key, int fallback, int min, int max, String doc) {
        Function<String, Integer> parse = t -> {
            try {
                return Integer.parseInt(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("'" + t + "' is not a whole number");
            }
        };
        return new Setting<>(key, doc, parse, fallback, Integer.toString(fallback), false, null, false,
                List.of(new Check<>(v -> v >= min && v <= max, v -> "must be " + min + ".." + max + ", was " + v)));
    }

    /** {@code true} or {@code false}. */
    public static Setting<Boolean> flag(String key, boolean fallback, String doc) {
        Function<String, Boolean> parse = t -> switch (t.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("'" + t + "' is not true or false");
        };
        return new Setting<>(key, doc, parse, fallback, Boolean.toString(fallback), false, null, false, List.of());
    }

    /** One of an enum's constants, written in lower case with {@code -} for {@code _}. */
    public static <E extends Enum<E>> Setting<E> oneOf(String key, Class<E> type, E fallback, String doc) {
        String names = Arrays.stream(type.getEnumConstants()).map(Setting::wireName).collect(Collectors.joining(", "));
        Function<String, E> parse = t -> Arrays.stream(type.getEnumConstants()).filter(c -> wireName(c).equalsIgnoreCase(t))
                .findFirst().orElseThrow(() -> new IllegalArgumentException("'" + t + "' is not one of " + names));
        return new Setting<>(key, doc, parse, fallback, fallback == null ? "none" : wireName(fallback), false, null, false,
                List.of());
    }

    /** A comma-separated list, each entry trimmed; an empty entry is a problem. */
    public static Setting<List<String>> list(String key, String doc) {
        Function<String, List<String>> parse = t -> {
            List<String> entries = Arrays.stream(t.split(",", -1)).map(String::trim).toList();
            if (entries.stream().anyMatch(String::isEmpty)) {
                throw new IllegalArgumentException("contains an empty entry");
            }
            return entries;
        };
        return new Setting<>(key, doc, parse, null, "none", false, null, false, List.of());
    }

    /**
     * A value of any type, read by {@code parser}, which throws {@link IllegalArgumentException} saying what
     * is wrong with the text (without the key); {@code shownDefault} is how the reference writes the default.
     */
    public static <T> Setting<T> of(String key, Function<String, T> parser, T fallback, String shownDefault, String doc) {
        return new Setting<>(key, doc, parser, fallback, shownDefault, false, null, false, List.of());
    }

    /**
     * A secret, given one of three ways ({@link WardenSettings#secret}): inline under the key, in a file
     * named by {@code key-file}, or in an environment variable named by {@code key-env}. Its value is never
     * shown: not in a problem, not in the documentation.
     */
    public static Setting<String> secret(String key, String doc) {
        return new Setting<>(key, doc, t -> t, null, "none", false, null, true, List.of());
    }

    /** The same setting, which must be given; {@code hint} (e.g. an example) follows "is required". */
    public Setting<T> required(String hint) {
        return new Setting<>(key, doc, parser, null, "required", true, hint, secret, checks);
    }

    /** The same setting, whose value must pass {@code ok}; otherwise {@code problem} says why ("must be ..."). */
    public Setting<T> check(Predicate<T> ok, Function<T, String> problem) {
        List<Check<T>> all = new ArrayList<>(checks);
        all.add(new Check<>(ok, problem));
        return new Setting<>(key, doc, parser, defaultValue, shownDefault, required, requiredHint, secret, all);
    }

    /** The same setting, whose text must match {@code pattern}; {@code rule} says what it must be. */
    public Setting<T> matching(Pattern pattern, String rule) {
        return check(v -> pattern.matcher(v.toString()).matches(), v -> "'" + v + "' " + rule);
    }

    /** The full key, e.g. {@code warden.lock.ttl}. */
    public String key() {
        return key;
    }

    /** Every key this setting reads: the key, and for a secret its {@code -file} and {@code -env} forms. */
    public List<String> keys() {
        return secret ? List.of(key, key + "-file", key + "-env") : List.of(key);
    }

    public String doc() {
        return doc;
    }

    /** The default as the documentation writes it: {@code 30s}, {@code none} or {@code required}. */
    public String shownDefault() {
        return shownDefault;
    }

    public T defaultValue() {
        return defaultValue;
    }

    public boolean isRequired() {
        return required;
    }

    public boolean isSecret() {
        return secret;
    }

    /** What a missing required setting is reported as. */
    String missing() {
        return key + " is required" + (requiredHint == null || requiredHint.isEmpty() ? "" : ", " + requiredHint);
    }

    /**
     * The value of {@code text}, or throws.
     *
     * @throws IllegalArgumentException naming the key and what is wrong (never a secret's value)
     */
    public T parse(String text) {
        T value;
        try {
            value = parser.apply(text.trim());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(key + ": " + e.getMessage());
        }
        for (Check<T> c : checks) {
            if (!c.ok.test(value)) {
                throw new IllegalArgumentException(key + " " + c.problem.apply(value));
            }
        }
        return value;
    }

    /** The name a constant is written with: {@code PROCEED} is {@code proceed}, {@code LOST_ON} is {@code lost-on}. */
    public static String wireName(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    private static String shown(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        if (d.toDaysPart() > 0 && d.equals(Duration.ofDays(d.toDays()))) {
            return d.toDays() + "d";
        }
        if (d.equals(Duration.ofHours(d.toHours()))) {
            return d.toHours() + "h";
        }
        if (d.equals(Duration.ofMinutes(d.toMinutes()))) {
            return d.toMinutes() + "m";
        }
        if (d.equals(Duration.ofSeconds(d.getSeconds()))) {
            return d.getSeconds() + "s";
        }
        return d.toMillis() + "ms";
    }

    @Override
    public String toString() {
        return key;
    }
}
