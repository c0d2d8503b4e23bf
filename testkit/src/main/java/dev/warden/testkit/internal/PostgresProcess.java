package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

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
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
    private static final int LAUNCH_ATTEMPTS = 3;
    private static final int LOG_TAIL_LINES = 30;
    /** sun_path holds 108 bytes; PostgreSQL appends "/.s.PGSQL.NNNNN" (and ".lock"). */
    private static final int MAX_SOCKET_DIR_LENGTH = 80;

    private final Path binDir;
    private final Path dir;
    private final Optional<PostgresOsUser> osUser;
    private final Map<String, String> settings;
    private final ServerProcess server;

    private int port;
    private PostgresClient client;
    private boolean closed;

    private PostgresProcess(Path binDir, Path dir, Optional<PostgresOsUser> osUser, Map<String, String> settings) {
        this.binDir = binDir;
        this.dir = dir;
        this.osUser = osUser;
        this.settings = Map.copyOf(settings);
        // The postmaster's children outlive a SIGKILL to it alone and keep the port and shared memory.
        this.server = new ServerProcess(dir, this::label, ServerProcess.Reach.TREE);
    }

    /**
     * Creates a cluster with {@code initdb} (superuser {@value #USER}, trust authentication, UTF8, C
     * locale), starts {@code postgres} on a free port with {@code settings} as {@code -c} options,
     * waits until it answers {@code select 1}, and creates database {@value #DATABASE}. Retries on
     * another port if the chosen one was taken meanwhile.
     */
    public static PostgresProcess launch(Path binDir, Map<String, String> settings, Function<String, String> env) {
        Optional<PostgresOsUser> osUser = PostgresOsUser.forServer(env);
        PostgresProcess postgres = new PostgresProcess(binDir,
                ServerProcess.createTempDir(null, "warden-postgres-", "PostgreSQL"), osUser, settings);
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
        return server.isRunning();
    }

    @Override
    public synchronized boolean isPaused() {
        return server.isPaused();
    }

    @Override
    public synchronized void pause() {
        requireRunning("pause");
        server.pause();
    }

    @Override
    public synchronized void resume() {
        requireRunning("resume");
        server.resume();
    }

    @Override
    public synchronized void kill() {
        requireOpen("kill");
        server.kill();
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
            server.destroy();
        } finally {
            server.deleteDirectory();
        }
    }

    @Override
    public String toString() {
        return "postgres on " + HOST + ":" + port + " in " + dir;
    }

    private void initialize() {
        server.cleanUpAtExit();
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
        Process started = server.launch(() -> PostgresExec.start(asServerUser(command), Map.of(), log()));
        boolean ready = Wait.until(START_TIMEOUT, () -> !started.isAlive() || client.isReady(database));
        if (!started.isAlive()) {
            server.awaitExit(started);
            throw new IllegalStateException("postgres on port " + port + " exited with code " + started.exitValue()
                    + "; log tail:\n" + tail(log()));
        }
        if (!ready) {
            server.kill();
            throw new IllegalStateException("postgres on port " + port + " did not accept connections within "
                    + START_TIMEOUT.toSeconds() + " s; log tail:\n" + tail(log()));
        }
        PostgresExec.Result probe = client.psql(database, "select 1", CHECK_TIMEOUT);
        if (!probe.ok() || !probe.stdout().trim().equals("1")) {
            server.kill();
            throw new IllegalStateException("postgres on port " + port + " accepts connections but select 1 failed: "
                    + probe.stderr().trim() + "; log tail:\n" + tail(log()));
        }
    }

    /** Fast shutdown (SIGINT: sessions are ended, a checkpoint is written); a paused server is resumed first. */
    private void shutDown() {
        server.shutDown(postmaster -> PostgresExec.signalQuietly("INT", List.of(postmaster.pid())), STOP_TIMEOUT);
    }

    private List<String> asServerUser(List<String> command) {
        return osUser.map(user -> user.wrap(command)).orElse(command);
    }

    private void requireRunning(String action) {
        requireOpen(action);
        if (!server.isRunning()) {
            throw new IllegalStateException("cannot " + action + " " + label()
                    + ": it is not running (stopped or killed? call restart())");
        }
    }

    private void requireOpen(String action) {
        if (closed) {
            throw new IllegalStateException("cannot " + action + " " + label() + ": it was closed");
        }
    }

    private String label() {
        return "postgres on port " + port;
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
        return Files.exists(file) ? ServerProcess.tail(file, LOG_TAIL_LINES) : "(no " + file.getFileName() + ")\n";
    }
}
