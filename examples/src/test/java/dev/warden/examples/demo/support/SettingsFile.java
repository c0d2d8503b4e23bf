package dev.warden.examples.demo.support;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

/** Settings files: Java properties, UTF-8, {@code warden.lock.*} and {@code warden.quota.*} keys. */
public final class SettingsFile {

    private SettingsFile() {
    }

    /**
     * @throws SetupException when the file cannot be read
     */
    public static Map<String, String> load(Path file) {
        Properties p = new Properties();
        try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(in);
        } catch (IOException e) {
            throw new SetupException("cannot read the settings file " + file + ": " + e);
        }
        Map<String, String> settings = new LinkedHashMap<>();
        for (String key : new TreeSet<>(p.stringPropertyNames())) {
            settings.put(key, p.getProperty(key).trim());
        }
        return settings;
    }

    /** Adds the scheme when an endpoint list was written without one: {@code 127.0.0.1:2379} becomes {@code etcd://127.0.0.1:2379}. */
    public static String withScheme(String scheme, String endpoints) {
        StringBuilder b = new StringBuilder();
        for (String e : endpoints.split(",")) {
            String t = e.trim();
            if (t.isEmpty()) {
                continue;
            }
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(t.contains("://") ? t : scheme + "://" + t);
        }
        return b.toString();
    }
}
