package dev.warden.lock;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one grammar of Warden's settings, used by the lock client, the quota engine, the ledger's CLI,
 * the demo and the Spring Boot starter alike.
 *
 * <ul>
 *   <li><b>Durations</b>: a whole number and a unit, {@code ms}, {@code s}, {@code m}, {@code h} or
 *       {@code d} ({@code 500ms}, {@code 30s}, {@code 1d}), or ISO-8601 ({@code PT30S}, {@code P1D}). No
 *       fractions, no signs, no spaces inside: {@code 1.5s} is {@code 1500ms}.</li>
 *   <li><b>Environment variables</b>: {@code WARDEN_LOCK_TTL} is {@code warden.lock.ttl}: after
 *       {@code WARDEN_<AREA>_}, the name is lower-cased, a single {@code _} becomes {@code -} and a double
 *       {@code __} becomes {@code .} ({@code WARDEN_QUOTA_LOCK_WAIT} is {@code warden.quota.lock-wait},
 *       {@code WARDEN_LOCK_ZOOKEEPER__LOST_ON} is {@code warden.lock.zookeeper.lost-on}).</li>
 *   <li><b>System properties</b>: {@code -Dwarden.lock.ttl=10s}, the setting's own name.</li>
 * </ul>
 * Nothing reads the environment behind your back: {@link #withSystemDefaults} layers it in when asked,
 * with the explicit settings first, then system properties, then the environment.
 */
public final class WardenSettings {

    /** The forms a duration may take, for messages. */
    public static final String DURATION_FORMS = "500ms, 30s, 2m, 1h, 1d or ISO-8601 like PT30S";

    /**
     * The areas whose settings environment variables and system properties may give: every
     * {@link dev.warden.lock.settings.SettingTable}'s prefix is {@code warden.<area>.} with one of these
     * (a test holds every declared key to it, and to its way back from its environment name).
     */
    public static final List<String> AREAS = List.of("lock", "quota", "ledger");

    private static final Pattern SHORT = Pattern.compile("(\\d{1,12})(ms|s|m|h|d)");
    private static final Pattern ENVIRONMENT = Pattern.compile("WARDEN_(" + AREAS.stream().map(a -> a.toUpperCase(Locale.ROOT))
            .collect(java.util.stream.Collectors.joining("|")) + ")_([A-Z0-9_]+)");

    private WardenSettings() {
    }

    /**
     * Parses a duration in the one grammar.
     *
     * @throws IllegalArgumentException naming the text and the accepted forms
     */
    public static Duration duration(String text) {
        if (text == null) {
            throw new IllegalArgumentException("a duration is required (write " + DURATION_FORMS + ")");
        }
        String t = text.trim();
        Matcher m = SHORT.matcher(t.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        try {
            if (t.startsWith("P") || t.startsWith("p")) {
                return Duration.parse(t);
            }
        } catch (DateTimeParseException e) {
            // fall through to the one message
        }
        throw new IllegalArgumentException("'" + text + "' is not a duration (write " + DURATION_FORMS + ")");
    }

    /**
     * A secret setting, given one of three ways: inline under {@code key}, in a file named by
     * {@code key-file} (its content, without the trailing line break), or in an environment variable
     * named by {@code key-env}. A file or a variable keeps the secret out of settings files, process
     * lists and configuration dumps. Empty when none is set.
     *
     * @param settings the settings, keyed as {@code key} is (with or without a prefix)
     * @param environment how environment variables are read ({@code System::getenv})
     * @throws IllegalArgumentException naming the settings and what is wrong, never the secret: more
     *         than one way given, a file that cannot be read, a variable not set, an empty secret
     */
    public static Optional<String> secret(Map<String, ?> settings, String key,
                                                    Function<String, String> environment) {
        Object inline = settings.get(key);
        Object file = settings.get(key + "-file");
        Object env = settings.get(key + "-env");
        int given = (inline != null ? 1 : 0) + (file != null ? 1 : 0) + (env != null ? 1 : 0);
        if (given == 0) {
            return Optional.empty();
        }
        if (given > 1) {
            throw new IllegalArgumentException(key + ", " + key + "-file and " + key + "-env: set only one");
        }
        String secret;
        if (inline != null) {
            secret = inline.toString();
        } else if (file != null) {
            Path path = Path.of(file.toString().trim());
            try {
                secret = Files.readString(path, StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                // The exception's class only: its message is the path again, at best.
                throw new IllegalArgumentException(key + "-file '" + path + "' cannot be read ("
                        + e.getClass().getSimpleName() + ")");
            }
            secret = secret.endsWith("\r\n") ? secret.substring(0, secret.length() - 2)
                    : secret.endsWith("\n") ? secret.substring(0, secret.length() - 1) : secret;
        } else {
            String name = env.toString().trim();
            secret = environment.apply(name);
            if (secret == null) {
                throw new IllegalArgumentException(key + "-env names the environment variable " + name + ", which is not set");
            }
        }
        if (secret.isEmpty()) {
            throw new IllegalArgumentException(key + (inline != null ? "" : file != null ? "-file" : "-env") + " gives an empty secret");
        }
        return Optional.of(secret);
    }

    /**
     * The settings of Warden's {@link #AREAS} ({@code warden.lock.*}, {@code warden.quota.*}, {@code warden.ledger.*}) found in environment
     * variables of the {@code WARDEN_LOCK_TTL} form, under their setting names.
     */
    public static Map<String, String> fromEnvironment(Map<String, String> environment) {
        Map<String, String> settings = new LinkedHashMap<>();
        environment.forEach((name, value) -> {
            Matcher m = ENVIRONMENT.matcher(name);
            if (m.matches() && value != null) {
                String key = m.group(2).toLowerCase(Locale.ROOT).replace("__", ".").replace('_', '-');
                settings.put("warden." + m.group(1).toLowerCase(Locale.ROOT) + "." + key, value);
            }
        });
        return settings;
    }

    /** The settings of Warden's {@link #AREAS} among system properties ({@code -Dwarden.lock.ttl=10s}). */
    public static Map<String, String> fromSystemProperties(Properties properties) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String name : properties.stringPropertyNames()) {
            if (AREAS.stream().anyMatch(area -> name.startsWith("warden." + area + "."))) {
                settings.put(name, properties.getProperty(name));
            }
        }
        return settings;
    }

    /**
     * {@code explicit} over this JVM's system properties over its environment variables, for the keys
     * of Warden's areas: what a deployment can set without code.
     */
    public static Map<String, Object> withSystemDefaults(Map<String, ?> explicit) {
        Map<String, Object> merged = new LinkedHashMap<>(fromEnvironment(System.getenv()));
        merged.putAll(fromSystemProperties(System.getProperties()));
        merged.putAll(explicit);
        return merged;
    }
}
