package dev.warden.spring.internal;

import dev.warden.lock.WardenSettings;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Warden's settings map from Spring's bound properties, written with Warden's keys, so Warden parses and
 * checks every value and reports every problem in its one configuration message.
 *
 * <p>Keys under the prefix that no property field binds are passed on as written: Warden refuses a
 * mistyped one ("unknown setting warden.lock.tll") in the same message, and accepts a setting that a
 * newer lock-api or quota-core knows before the starter names it. Environment variables are left out
 * of that pass-through; they are read in Warden's own grammar instead (see {@link #fromVariables}).
 */
public final class Settings {

    private final String prefix;
    private final List<ConfigurationPropertyName> known;
    private final Map<String, Object> values = new LinkedHashMap<>();

    /**
     * @param prefix e.g. {@code warden.lock}
     * @param known  the names the properties class binds, relative to the prefix, e.g. {@code connect-timeout}
     */
    public Settings(String prefix, List<String> known) {
        this.prefix = prefix;
        this.known = known.stream().map(ConfigurationPropertyName::of).toList();
    }

    /** Puts {@code prefix.key = value} unless the value is null. */
    public Settings put(String key, Object value) {
        if (value != null) {
            values.put(prefix + "." + key, value instanceof String s ? s.trim() : value.toString());
        }
        return this;
    }

    /** Adds the keys under the prefix that no property field binds (see the class comment). */
    public Settings withUnbound(Environment environment) {
        ConfigurationPropertyName root = ConfigurationPropertyName.of(prefix);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            if (source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource variables) {
                fromVariables(variables);
                continue;
            }
            if (!(source instanceof IterableConfigurationPropertySource iterable)) {
                continue;
            }
            iterable.filter(root::isAncestorOf).stream().forEach(name -> {
                ConfigurationPropertyName relative = name.subName(root.getNumberOfElements());
                if (known.stream().noneMatch(k -> k.equals(relative) || k.isAncestorOf(relative))) {
                    ConfigurationProperty property = iterable.getConfigurationProperty(name);
                    if (property != null && property.getValue() != null) {
                        // The first source holds the value in force.
                        values.putIfAbsent(name.toString(), property.getValue().toString().trim());
                    }
                }
            });
        }
        return this;
    }

    /**
     * Environment variables in Warden's grammar ({@code WARDEN_LOCK_REDIS__PASSWORD_FILE} is
     * {@code warden.lock.redis.password-file}), for what the bound properties left unset: Spring's relaxed
     * binding reads {@code WARDEN_LOCK_CONNECTTIMEOUT}, not the {@code WARDEN_LOCK_CONNECT_TIMEOUT} Warden
     * documents, and cannot say where a dash was in an option it does not bind.
     */
    private void fromVariables(SystemEnvironmentPropertySource variables) {
        Map<String, String> named = new LinkedHashMap<>();
        for (String name : variables.getPropertyNames()) {
            Object value = variables.getProperty(name);
            if (value != null) {
                named.put(name, value.toString());
            }
        }
        WardenSettings.fromEnvironment(named).forEach((key, value) -> {
            if (key.startsWith(prefix + ".")) {
                values.putIfAbsent(key, value.trim());
            }
        });
    }

    public Map<String, Object> asMap() {
        return Map.copyOf(values);
    }
}
