package dev.warden.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes the settings file an example reads, as a user would, naming the servers a test launched. */
public final class Settings {

    /** Connecting (and loading the scripts) on a loaded 2-core machine beside other builds: more than the 5 s default. */
    public static final String PATIENT_QUOTA = "warden.quota.connect-timeout=30s";
    public static final String PATIENT_LOCK = "warden.lock.connect-timeout=30s";

    private Settings() {
    }

    /** {@code dir/name} with {@code lines} ({@code key=value}); returns its path as a program argument. */
    public static String file(Path dir, String name, String... lines) {
        Path file = dir.resolve(name);
        try {
            Files.writeString(file, String.join("\n", lines) + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file.toString();
    }
}
