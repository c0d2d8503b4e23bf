package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * The non-root OS user that {@code initdb} and {@code postgres} run as when the JVM runs as root
 * (both refuse root): {@code WARDEN_PG_OS_USER}, else {@code postgres}. Commands are wrapped in
 * {@code setpriv --reuid --regid --init-groups}, which execs, so the postmaster's pid is the pid of
 * the process the JVM started.
 */
final class PostgresOsUser {

    private static final Duration ID_TIMEOUT = Duration.ofSeconds(10);

    private final String name;
    private final int uid;
    private final int gid;

    private PostgresOsUser(String name, int uid, int gid) {
        this.name = name;
        this.uid = uid;
        this.gid = gid;
    }

    /** The user to switch to, or empty when the JVM is not root and runs the binaries itself. */
    static Optional<PostgresOsUser> forServer(Function<String, String> env) {
        if (!jvmIsRoot()) {
            return Optional.empty();
        }
        String explicit = env.apply("WARDEN_PG_OS_USER");
        String name = explicit == null || explicit.isBlank() ? "postgres" : explicit.trim();
        PostgresExec.Result uid = PostgresExec.run(List.of("id", "-u", name), Map.of(), null, ID_TIMEOUT);
        PostgresExec.Result gid = PostgresExec.run(List.of("id", "-g", name), Map.of(), null, ID_TIMEOUT);
        if (!uid.ok() || !gid.ok()) {
            throw new IllegalStateException("the JVM runs as root, and initdb/postgres refuse to run as root; testkit runs"
                    + " them as OS user '" + name + "', which does not exist: create it (useradd --system " + name
                    + "), or set WARDEN_PG_OS_USER to another non-root user, or run the tests as a non-root user");
        }
        int numericUid = Integer.parseInt(uid.stdout().trim());
        if (numericUid == 0) {
            throw new IllegalStateException("WARDEN_PG_OS_USER=" + name + " is root; PostgreSQL refuses to run as root");
        }
        return Optional.of(new PostgresOsUser(name, numericUid, Integer.parseInt(gid.stdout().trim())));
    }

    /** {@code setpriv ... command}. */
    List<String> wrap(List<String> command) {
        List<String> wrapped = new ArrayList<>(List.of("setpriv",
                "--reuid=" + uid, "--regid=" + gid, "--init-groups"));
        wrapped.addAll(command);
        return wrapped;
    }

    /** Gives {@code path} to this user, so the server can write there. */
    void own(Path path) {
        try {
            Files.setAttribute(path, "unix:uid", uid);
            Files.setAttribute(path, "unix:gid", gid);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot give " + path + " to OS user " + name, e);
        }
    }

    String name() {
        return name;
    }

    /** The effective uid owns {@code /proc/self}; {@code user.name} is the fallback off Linux. */
    static boolean jvmIsRoot() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return "root".equals(System.getProperty("user.name"));
        }
    }
}
