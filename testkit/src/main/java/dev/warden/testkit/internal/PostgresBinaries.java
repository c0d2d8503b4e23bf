package dev.warden.testkit.internal;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Locates the PostgreSQL binaries: {@code WARDEN_PG_BIN} (a directory), else {@code pg_config
 * --bindir}, else the highest {@code /usr/lib/postgresql/VERSION/bin} (the Debian/Ubuntu layout,
 * where {@code initdb} and {@code postgres} are not on {@code PATH}).
 */
public final class PostgresBinaries {

    public static final String NOT_FOUND = "PostgreSQL server binaries not found: install them (Debian/Ubuntu:"
            + " apt-get install -y postgresql), or set WARDEN_PG_BIN to their directory, or WARDEN_PG_URL to a"
            + " running server";

    static final String PSQL_NOT_FOUND = "psql not found: install the PostgreSQL client (Debian/Ubuntu:"
            + " apt-get install -y postgresql-client), or set WARDEN_PG_BIN to the directory that holds it";

    private static final Path DEBIAN_VERSIONS = Path.of("/usr/lib/postgresql");
    private static final Duration PG_CONFIG_TIMEOUT = Duration.ofSeconds(10);

    private PostgresBinaries() {
    }

    /** The directory holding {@code initdb} and {@code postgres}; see the class comment for the order. */
    public static Path serverDirectory(Function<String, String> env) {
        return serverDirectory(env, DEBIAN_VERSIONS);
    }

    /**
     * {@link #serverDirectory(Function)} with {@code versionsRoot} in place of
     * {@code /usr/lib/postgresql}, so the not-found path can be tested.
     *
     * @throws IllegalStateException with {@link #NOT_FOUND} if nothing is found, or naming
     *     {@code WARDEN_PG_BIN} if that directory lacks the binaries
     */
    public static Path serverDirectory(Function<String, String> env, Path versionsRoot) {
        String explicit = env.apply("WARDEN_PG_BIN");
        if (explicit != null && !explicit.isBlank()) {
            Path dir = Path.of(explicit.trim());
            if (!hasServer(dir)) {
                throw new IllegalStateException("WARDEN_PG_BIN=" + explicit
                        + " does not hold executable initdb and postgres binaries");
            }
            return dir;
        }
        Optional<Path> fromPgConfig = onPath(env, "pg_config").flatMap(PostgresBinaries::pgConfigBindir);
        if (fromPgConfig.isPresent() && hasServer(fromPgConfig.get())) {
            return fromPgConfig.get();
        }
        return highestVersion(versionsRoot).orElseThrow(() -> new IllegalStateException(NOT_FOUND));
    }

    /**
     * A client tool ({@code psql}, {@code pg_isready}): from {@code WARDEN_PG_BIN} or
     * {@code preferred} if they hold it, else from the places {@link #serverDirectory} looks, else
     * from {@code PATH}.
     */
    static Optional<Path> client(String name, Function<String, String> env, Path preferred) {
        List<Path> dirs = new ArrayList<>();
        String explicit = env.apply("WARDEN_PG_BIN");
        if (explicit != null && !explicit.isBlank()) {
            dirs.add(Path.of(explicit.trim()));
        }
        if (preferred != null) {
            dirs.add(preferred);
        }
        for (Path dir : dirs) {
            if (isExecutable(dir.resolve(name))) {
                return Optional.of(dir.resolve(name));
            }
        }
        Optional<Path> onPath = onPath(env, name);
        if (onPath.isPresent()) {
            return onPath;
        }
        return versionDirectories(DEBIAN_VERSIONS).stream()
                .map(dir -> dir.resolve(name))
                .filter(PostgresBinaries::isExecutable)
                .findFirst();
    }

    private static Optional<Path> pgConfigBindir(Path pgConfig) {
        PostgresExec.Result result = PostgresExec.run(List.of(pgConfig.toString(), "--bindir"), Map.of(), null, PG_CONFIG_TIMEOUT);
        String out = result.stdout().trim();
        return result.ok() && !out.isEmpty() ? Optional.of(Path.of(out)) : Optional.empty();
    }

    private static Optional<Path> highestVersion(Path versionsRoot) {
        return versionDirectories(versionsRoot).stream().filter(PostgresBinaries::hasServer).findFirst();
    }

    /** {@code root/VERSION/bin} directories, highest version first. */
    private static List<Path> versionDirectories(Path root) {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(root)) {
            return entries
                    .filter(entry -> Files.isDirectory(entry.resolve("bin")))
                    .sorted(Comparator.comparing((Path entry) -> versionKey(entry.getFileName().toString())).reversed())
                    .map(entry -> entry.resolve("bin"))
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            return List.of();
        }
    }

    /** "9.6" → 9_006_000, "15" → 15_000_000: numeric, so 15 sorts above 9.6; non-numbers sort last. */
    private static long versionKey(String name) {
        String[] parts = name.split("\\.");
        long key = 0;
        for (int i = 0; i < 3; i++) {
            long part = 0;
            if (i < parts.length) {
                try {
                    part = Long.parseLong(parts[i]);
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
            key = key * 1000 + Math.min(part, 999);
        }
        return key;
    }

    private static Optional<Path> onPath(Function<String, String> env, String name) {
        String searchPath = env.apply("PATH");
        if (searchPath == null) {
            return Optional.empty();
        }
        return Stream.of(searchPath.split(File.pathSeparator))
                .filter(entry -> !entry.isEmpty())
                .map(entry -> Path.of(entry, name))
                .filter(PostgresBinaries::isExecutable)
                .findFirst();
    }

    private static boolean hasServer(Path dir) {
        return isExecutable(dir.resolve("initdb")) && isExecutable(dir.resolve("postgres"));
    }

    private static boolean isExecutable(Path file) {
        return Files.isRegularFile(file) && Files.isExecutable(file);
    }
}
