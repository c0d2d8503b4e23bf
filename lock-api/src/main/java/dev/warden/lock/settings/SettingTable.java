package dev.warden.lock.settings;

import dev.warden.lock.WardenSettings;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The settings of one area ({@code warden.lock.}, a backend's {@code warden.lock.redis.},
 * {@code warden.quota.}, {@code warden.ledger.}), each declared once as a {@link Setting}. It reads a
 * settings map into typed values and names every problem at once, and writes the area's reference table,
 * which {@code docs/settings.md} is checked against. Immutable.
 */
public final class SettingTable {

    private final String prefix;
    private final String title;
    private final List<Setting<?>> settings;

    /**
     * @param prefix every key's start, with its dot: {@code warden.quota.}
     * @param title  what the area is, for the reference: {@code The quota engine}
     * @throws IllegalArgumentException when a key does not start with the prefix or is declared twice
     */
    public SettingTable(String prefix, String title, List<Setting<?>> settings) {
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.title = Objects.requireNonNull(title, "title");
        this.settings = List.copyOf(settings);
        SortedSet<String> seen = new TreeSet<>();
        for (Setting<?> s : this.settings) {
            for (String key : s.keys()) {
                if (!key.startsWith(prefix) || !seen.add(key)) {
                    throw new IllegalArgumentException(key + " is outside " + prefix + " or declared twice");
                }
            }
        }
    }

    public String prefix() {
        return prefix;
    }

    public String title() {
        return title;
    }

    public List<Setting<?>> settings() {
        return settings;
    }

    /** Every key the table reads, in full, sorted. */
    public SortedSet<String> keys() {
        SortedSet<String> keys = new TreeSet<>();
        settings.forEach(s -> keys.addAll(s.keys()));
        return Collections.unmodifiableSortedSet(keys);
    }

    /** The keys relative to the prefix ({@code ttl}, {@code tls.trust-store}). */
    public SortedSet<String> names() {
        SortedSet<String> names = new TreeSet<>();
        keys().forEach(k -> names.add(k.substring(prefix.length())));
        return Collections.unmodifiableSortedSet(names);
    }

    /**
     * Reads the table's settings from {@code given} (other keys are ignored; those under the prefix that no
     * setting declares are left in {@link Values#others()}); environment variables for {@code *-env} secrets
     * come from {@code environment}.
     */
    public Values read(Map<String, ?> given, Function<String, String> environment) {
        Map<String, String> own = new TreeMap<>();
        List<String> problems = new ArrayList<>();
        given.forEach((k, v) -> {
            if (k != null && k.startsWith(prefix)) {
                if (v == null) {
                    problems.add(k + " has no value");
                } else {
                    own.put(k, v instanceof Duration d ? d.toString() : v.toString().trim());
                }
            }
        });
        Map<Setting<?>, Object> values = new IdentityHashMap<>();
        for (Setting<?> s : settings) {
            s.keys().forEach(own.keySet()::remove);
            read(s, given, environment, values, problems);
        }
        Map<String, String> others = new LinkedHashMap<>();
        own.forEach((k, v) -> others.put(k.substring(prefix.length()), v));
        return new Values(values, problems, others);
    }

    private static <T> void read(Setting<T> s, Map<String, ?> given, Function<String, String> environment,
                                 Map<Setting<?>, Object> values, List<String> problems) {
        String text;
        if (s.isSecret()) {
            try {
                text = WardenSettings.secret(given, s.key(), environment).orElse(null);
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
                return;
            }
        } else {
            Object raw = given.get(s.key());
            text = raw == null ? null : raw instanceof Duration d ? d.toString() : raw.toString().trim();
            if (text != null && text.isEmpty()) {
                text = null;
            }
        }
        if (text == null) {
            if (s.isRequired()) {
                problems.add(s.missing());
            } else if (s.defaultValue() != null) {
                values.put(s, s.defaultValue());
            }
            return;
        }
        try {
            values.put(s, s.parse(text));
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
    }

    /** The table's settings read from a map: typed values, the problems, and the keys it did not declare. */
    public static final class Values {
        private final Map<Setting<?>, Object> values;
        private final List<String> problems;
        private final Map<String, String> others;

        private Values(Map<Setting<?>, Object> values, List<String> problems, Map<String, String> others) {
            this.values = values;
            this.problems = List.copyOf(problems);
            this.others = Collections.unmodifiableMap(others);
        }

        /** The value given, or the default; null when neither (or when it was a problem). */
        @SuppressWarnings("unchecked")
        public <T> T get(Setting<T> setting) {
            return (T) values.get(setting);
        }

        /** {@link #get}, when there is a value. */
        public <T> Optional<T> find(Setting<T> setting) {
            return Optional.ofNullable(get(setting));
        }

        /** Every problem, each naming its key; empty when every value is usable. */
        public List<String> problems() {
            return problems;
        }

        /** The keys under the prefix that no setting declares, relative to it, with their text. */
        public Map<String, String> others() {
            return others;
        }
    }

    /** The environment variable a key is read from: {@code warden.lock.connect-timeout} is {@code WARDEN_LOCK_CONNECT_TIMEOUT}. */
    public static String environmentName(String key) {
        int area = key.indexOf('.', "warden.".length());
        String head = key.substring(0, area + 1);
        String rest = key.substring(area + 1);
        return (head.replace('.', '_') + rest.replace(".", "__").replace('-', '_')).toUpperCase(Locale.ROOT);
    }

    /** The area's reference as a Markdown table: setting, default, meaning. */
    public String markdown() {
        StringBuilder b = new StringBuilder("| setting | default | meaning |\n|---|---|---|\n");
        for (Setting<?> s : settings) {
            String keys = String.join(", ", s.keys().stream().map(k -> "`" + k + "`").toList());
            b.append("| ").append(keys).append(" | ").append(s.shownDefault().equals("none") || s.shownDefault().equals("required")
                    ? s.shownDefault() : "`" + s.shownDefault() + "`").append(" | ").append(s.doc().replace("|", "\\|"))
                    .append(" |\n");
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return prefix + "*";
    }
}
