package dev.warden.examples;

import dev.warden.lock.WardenSettings;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Where every example reads its settings, the way Warden's own tools do: a properties file, over
 * {@code -Dwarden.lock.ttl=10s}-style system properties, over {@code WARDEN_LOCK_TTL}-style environment
 * variables ({@link WardenSettings#withSystemDefaults}). One map holds them all: {@code LockClient} reads
 * the {@code warden.lock.*} keys, {@code QuotaService} and the ledger the {@code warden.quota.*} keys, and
 * each ignores the rest, so the application's own keys ({@code ledger.jdbc-url}) may sit beside them.
 * The one class the examples share: copy it along with the one you take.
 */
public final class Config {

    private Config() {
    }

    /**
     * The settings: the file's, then the system properties' and the environment's.
     *
     * @param file a properties file (UTF-8), or {@code null} for system properties and environment only
     * @throws UncheckedIOException when the file cannot be read
     */
    public static Map<String, Object> load(String file) {
        Map<String, Object> explicit = new LinkedHashMap<>();
        if (file != null) {
            Properties p = new Properties();
            try (Reader in = Files.newBufferedReader(Path.of(file), StandardCharsets.UTF_8)) {
                p.load(in);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the settings file " + file, e);
            }
            p.stringPropertyNames().forEach(key -> explicit.put(key, p.getProperty(key).trim()));
        }
        return WardenSettings.withSystemDefaults(explicit);
    }

    /** An application setting: the file's, else the system property of that name, else {@code fallback}. */
    public static String get(Map<String, ?> settings, String key, String fallback) {
        Object value = settings.get(key);
        return value != null ? value.toString() : System.getProperty(key, fallback);
    }
}
