package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * A PostgreSQL postmaster launched from local binaries on a loopback port, with its own temporary
 * directory (cluster, socket directory, logs) that survives {@link #stop()}, {@link #kill()} and
 * {@link #restart()}. When the JVM runs as root, {@code initdb} and {@code postgres} run as a
 * non-root OS user (see {@link PostgresOsUser}) and the directory is given to that user.
 */
public final class PostgresProcess implements PostgresNode {

    public static final String USER = "warden";
    public static final String DATABASE = "warden";

    private static final String HOST = "127.0.0.1";
    private static final String BOOT_DATABASE = "postgres";
    private static final Duration INITDB_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(30);
    private static final long STOP_TIMEOUT_SECONDS = 60;
    private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
    private static final int LAUNCH_ATTEMPTS = 3;
    private static final int LOG_TAIL_LINES = 30;
    /** sun_path holds 108 bytes; PostgreSQL appends "/.s.PGSQL.NNNNN" (and ".lock"). */
    private static final int MAX_SOCKET_DIR_LENGTH = 80;

    private final Path binDir;
    private final Path dir;
    private final Optional<PostgresOsUser> osUser;
    private final Map<String, String> settings;
    private final Runnable exitCleanup = this::destroyAndDelete;

    private int port;
    private PostgresClient client;
    private volatile Process process;
    private List<Long> pausedChildren = List.of();
    private boolean paused;
    private boolean closed;

    private PostgresProcess(Path binDir, Path dir, Optional<PostgresOsUser> osUser, Map<String, String> settings) {
        this.binDir = binDir;
        this.dir = dir;
        this.osUser = osUser;
        this.settings = Map.copyOf(settings);
    }

    /**
     * Creates a cluster with {@code initdb} (superuser {@value #USER}, trust authentication, UTF8, C
     * locale), starts {@code postgres} on a free port with {@code settings} as {@code -c} options,
     * waits until it answers {@code select 1}, and creates database {@value #DATABASE}. Retries on
     * another port if the chosen one was taken meanwhile.
     */
    public static PostgresProcess launch(Path binDir, Map<String, String> settings, Function<String, String> env) {
        Optional<PostgresOsUser> osUser = PostgresOsUser.forServer(env);
        PostgresProcess postgres = new PostgresProcess(binDir, createTempDir(), osUser, settings);
        try {
            postgres.initialize();
            for (int attempt = 1; ; attempt++) {
                postgres.port = FreePorts.find();
                postgres.client = postgres.newClient(env);
                long logOffset = postgres.logSize();
                try {
                    postgres.startAndAwait(BOOT_DATABASE);
                    break;
                } catch (IllegalStateException e) {
                    boolean portTaken = postgres.logSince(logOffset).contains("Address already in use");
                    if (!portTaken || attempt == LAUNCH_ATTEMPTS) {
                        throw e;
                    }
                }
            }
            postgres.createDatabase();
            return postgres;
        } catch (RuntimeException e) {
            postgres.close();
            throw e;
        }
    }

    @Override
    public String host() {
        return HOST;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String database() {
        return DATABASE;
    }

    @Override
    public String user() {
        return USER;
    }

    @Override
    public String jdbcUrl() {
        return "jdbc:postgresql://" + HOST + ":" + port + "/" + DATABASE + "?user=" + USER;
    }

    @Override
    public PostgresClient client() {
        return client;
    }

    @Override
    public boolean isRunning() {
        Process current = process;
        return current != null && current.isAlive();
    }

    @Override
    public synchronized boolean isPaused() {
        return paused;
    }

    /** SIGSTOP to the postmaster first (so it forks nothing new), then to every process below it. */
    @Override
    public synchronized void pause() {
        requireRunning("pause");
        long postmaster = process.pid();
        PostgresExec.signal("STOP", postmaster);
        List<Long> children = PostgresExec.descendants(postmaster).stream().map(ProcessHandle::pid).toList();
        PostgresExec.signalQuietly("STOP", children);
        pausedChildren = children;
        paused = true;
    }

    @Override
    public synchronized void resume() {
        requireRunning("resume");
        continueTree(process);
    }

    @Override
    public synchronized void kill() {
        requireOpen("kill");
        Process current = process;
        if (current != null && current.isAlive()) {
            killTree(current);
        }
        paused = false;
        pausedChildren = List.of();
    }

    @Override
    public synchronized void stop() {
        requireOpen("stop");
        shutDown();
    }

    @Override
    public synchronized void restart() {
        requireOpen("restart");
        shutDown();
        startAndAwait(DATABASE);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            shutDown();
        } catch (RuntimeException e) {
            destroyTree();
        } finally {
            ExitCleanup.remove(exitCleanup);
            deleteDir();
        }
    }

    @Override
    public String toString() {
        return "postgres on " + HOST + ":" + port + " in " + dir;
    }

    private void initialize() {
        ExitCleanup.add(exitCleanup);
        Path sockets = sockets();
        try {
            Files.createDirectories(sockets);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + sockets, e);
        }
        osUser.ifPresent(user -> {
            user.own(dir);
            user.own(sockets);
        });
        List<String> initdb = List.of(binDir.resolve("initdb").toString(),
                "-D", data().toString(),
                "-A", "trust",
                "-U", USER,
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
                "--no-instructions");
        Path initdbLog = dir.resolve("initdb.log");
        int exit = PostgresExec.runLogged(asServerUser(initdb), Map.of(), initdbLog, INITDB_TIMEOUT);
        if (exit != 0) {
            String hint = osUser.map(user -> "\n(initdb ran as OS user '" + user.name() + "' because the JVM runs as root;"
                    + " that user must be able to reach " + dir + ")").orElse("");
            throw new IllegalStateException((exit < 0 ? "initdb did not finish within " + INITDB_TIMEOUT.toSeconds() + " s"
                    : "initdb exited with code " + exit) + "; output tail:\n" + tail(initdbLog) + hint);
        }
    }

    private PostgresClient newClient(Function<String, String> env) {
        Path psql = PostgresBinaries.client("psql", env, binDir)
                .orElseThrow(() -> new IllegalStateException(PostgresBinaries.PSQL_NOT_FOUND));
        Path pgIsReady = PostgresBinaries.client("pg_isready", env, binDir).orElse(null);
        return new PostgresClient(psql, pgIsReady, HOST, port, USER, null, null);
    }

    private void createDatabase() {
        PostgresExec.Result created = client.psql(BOOT_DATABASE, "CREATE DATABASE " + DATABASE, CHECK_TIMEOUT);
        if (!created.ok()) {
            throw new IllegalStateException("cannot create database " + DATABASE + " on port " + port + ": "
                    + created.stderr().trim() + "; log tail:\n" + tail(log()));
        }
    }

    private void startAndAwait(String database) {
        ExitCleanup.add(exitCleanup);
        List<String> command = new ArrayList<>(List.of(binDir.resolve("postgres").toString(),
                "-D", data().toString(),
                "-p", Integer.toString(port),
                "-c", "listen_addresses=" + HOST));
        String sockets = sockets().toString();
        command.add("-c");
        command.add("unix_socket_directories=" + (sockets.length() <= MAX_SOCKET_DIR_LENGTH ? sockets : ""));
        settings.forEach((name, value) -> {
            command.add("-c");
            command.add(name + "=" + value);
        });
        Process started = PostgresExec.start(asServerUser(command), Map.of(), log());
        process = started;
        paused = false;
        boolean ready = Wait.until(START_TIMEOUT, () -> !started.isAlive() || client.isReady(database));
        if (!started.isAlive()) {
            awaitExit(started);
            throw new IllegalStateException("postgres on port " + port + " exited with code " + started.exitValue()
                    + "; log tail:\n" + tail(log()));
        }
        if (!ready) {
            killTree(started);
            throw new IllegalStateException("postgres on port " + port + " did not accept connections within "
                    + START_TIMEOUT.toSeconds() + " s; log tail:\n" + tail(log()));
        }
        PostgresExec.Result probe = client.psql(database, "select 1", CHECK_TIMEOUT);
        if (!probe.ok() || !probe.stdout().trim().equals("1")) {
            killTree(started);
            throw new IllegalStateException("postgres on port " + port + " accepts connections but select 1 failed: "
                    + probe.stderr().trim() + "; log tail:\n" + tail(log()));
        }
    }

    /** Fast shutdown (SIGINT: sessions are ended, a checkpoint is written); a paused server is resumed first. */
    private void shutDown() {
        Process current = process;
        if (current == null || !current.isAlive()) {
            paused = false;
            pausedChildren = List.of();
            return;
        }
        if (paused) {
            continueTree(current);
        }
        PostgresExec.signalQuietly("INT", List.of(current.pid()));
        try {
            if (!current.waitFor(STOP_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                killTree(current);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            killTree(current);
            throw new IllegalStateException("interrupted while stopping postgres on port " + port, e);
        }
    }

    private void continueTree(Process postmaster) {
        Set<Long> children = new LinkedHashSet<>(pausedChildren);
        PostgresExec.descendants(postmaster.pid()).forEach(child -> children.add(child.pid()));
        PostgresExec.signalQuietly("CONT", children);
        PostgresExec.signal("CONT", postmaster.pid());
        paused = false;
        pausedChildren = List.of();
    }

    /**
     * SIGKILL to the postmaster and every process below it. Each postmaster child is a session
     * leader of its own, so the process group does not reach them; the postmaster is stopped first
     * so that it forks nothing between the snapshot of its children and the kill. Waits until all
     * are gone, so the port and the shared memory are free for {@link #restart()}.
     */
    private void killTree(Process postmaster) {
        PostgresExec.signalQuietly("STOP", List.of(postmaster.pid()));
        List<ProcessHandle> children = PostgresExec.descendants(postmaster.pid());
        postmaster.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        awaitExit(postmaster);
        if (!Wait.until(KILL_TIMEOUT, () -> children.stream().allMatch(PostgresExec::isGone))) {
            throw new IllegalStateException("postgres children of pid " + postmaster.pid() + " survived SIGKILL: "
                    + children.stream().filter(child -> !PostgresExec.isGone(child)).map(ProcessHandle::pid).toList());
        }
    }

    private void awaitExit(Process target) {
        try {
            if (!target.waitFor(KILL_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new IllegalStateException("postgres pid " + target.pid() + " did not exit after SIGKILL");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for postgres pid " + target.pid(), e);
        }
    }

    /** For the JVM exit hook and failed closes: no waiting on conditions, no helper processes. */
    private void destroyTree() {
        Process current = process;
        if (current != null) {
            List<ProcessHandle> children = PostgresExec.descendants(current.pid());
            current.destroyForcibly();
            children.forEach(ProcessHandle::destroyForcibly);
            try {
                current.waitFor(KILL_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void destroyAndDelete() {
        destroyTree();
        deleteDir();
    }

    private List<String> asServerUser(List<String> command) {
        return osUser.map(user -> user.wrap(command)).orElse(command);
    }

    private void requireRunning(String action) {
        requireOpen(action);
        if (!isRunning()) {
            throw new IllegalStateException("cannot " + action + " postgres on port " + port
                    + ": it is not running (stopped or killed? call restart())");
        }
    }

    private void requireOpen(String action) {
        if (closed) {
            throw new IllegalStateException("cannot " + action + " postgres on port " + port + ": it was closed");
        }
    }

    private Path data() {
        return dir.resolve("data");
    }

    private Path sockets() {
        return dir.resolve("sock");
    }

    private Path log() {
        return dir.resolve("postgres.log");
    }

    private long logSize() {
        try {
            return Files.exists(log()) ? Files.size(log()) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private String logSince(long offset) {
        try {
            byte[] bytes = Files.exists(log()) ? Files.readAllBytes(log()) : new byte[0];
            int from = (int) Math.min(offset, bytes.length);
            return new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(Path file) {
        try {
            if (!Files.exists(file)) {
                return "(no " + file.getFileName() + ")\n";
            }
            List<String> lines = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).lines().toList();
            return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size())) + "\n";
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")\n";
        }
    }

    private static Path createTempDir() {
        try {
            return Files.createTempDirectory("warden-postgres-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for PostgreSQL", e);
        }
    }

    private void deleteDir() {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // Best effort: a leftover directory under the temp dir must not fail a test.
        }
    }
}
