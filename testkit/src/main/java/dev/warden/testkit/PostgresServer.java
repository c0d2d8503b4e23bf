package dev.warden.testkit;

import dev.warden.testkit.internal.PostgresBinaries;
import dev.warden.testkit.internal.PostgresExec;
import dev.warden.testkit.internal.PostgresExternal;
import dev.warden.testkit.internal.PostgresNode;
import dev.warden.testkit.internal.PostgresProcess;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * A real PostgreSQL server for an integration test, with fault controls (stop, kill, pause), so
 * tests exercise the database rather than a mock.
 *
 * <p>{@link #start()} and {@link Builder#start()} resolve the server in this order:
 *
 * <ol>
 *   <li>{@code WARDEN_PG_URL} (for example {@code jdbc:postgresql://127.0.0.1:5432/test?user=postgres}):
 *       that server is used as is; fault controls throw {@link UnsupportedOperationException};
 *   <li>local server binaries, from {@code WARDEN_PG_BIN} (a directory), else {@code pg_config
 *       --bindir}, else the highest {@code /usr/lib/postgresql/VERSION/bin}: {@code initdb} creates
 *       a cluster in a fresh temporary directory (superuser {@code warden}, trust authentication,
 *       UTF8, C locale), {@code postgres} serves it on a free 127.0.0.1 port, and database
 *       {@code warden} is created; the processes die with the JVM;
 *   <li>otherwise an {@link IllegalStateException} that says how to install PostgreSQL: a missing
 *       server fails the test rather than skipping it.
 * </ol>
 *
 * <p>A launched server trades durability against OS crashes for speed: {@code fsync=off} and
 * {@code full_page_writes=off}. Neither matters when only the server process dies, so a commit
 * that was acknowledged before {@link #kill()} survives it. {@code synchronous_commit} stays
 * {@code on} on purpose: with it off, a commit is acknowledged before its WAL leaves PostgreSQL's
 * own memory, and {@link #kill()} loses it. Override any of them with {@link Builder#setting}.
 *
 * <p>Root: {@code initdb} and {@code postgres} refuse to run as root, so when the JVM runs as root
 * (typical in CI containers) they run as OS user {@code postgres} (or {@code WARDEN_PG_OS_USER})
 * through {@code setpriv}, and the temporary directory is given to that user. Clients
 * ({@code psql}, {@code pg_isready}) run as the JVM's user and connect over TCP.
 *
 * <p>{@link #psql(String)} reads the database directly through the {@code psql} binary, so
 * assertions do not depend on the code under test, and testkit needs no JDBC driver.
 */
public final class PostgresServer implements AutoCloseable {

    private static final Duration DEFAULT_PSQL_TIMEOUT = Duration.ofSeconds(30);

    private final PostgresNode node;

    private PostgresServer(PostgresNode node) {
        this.node = node;
    }

    /** Starts a server with default options. */
    public static PostgresServer start() {
        return builder().start();
    }

    /** Options for the server to start. */
    public static Builder builder() {
        return new Builder();
    }

    /** The host clients connect to ({@code 127.0.0.1} for a launched server). */
    public String host() {
        return node.host();
    }

    /** The port clients connect to; it stays the same across {@link #stop()}, {@link #kill()} and {@link #restart()}. */
    public int port() {
        return node.port();
    }

    /** The database tests use ({@code warden} for a launched server). */
    public String database() {
        return node.database();
    }

    /** The user tests connect as ({@code warden}, a superuser, for a launched server; no password). */
    public String user() {
        return node.user();
    }

    /**
     * {@code jdbc:postgresql://127.0.0.1:PORT/warden?user=warden} for a launched server; the
     * {@code WARDEN_PG_URL} value as given otherwise.
     */
    public String jdbcUrl() {
        return node.jdbcUrl();
    }

    /**
     * Runs {@code sql} with {@code psql -v ON_ERROR_STOP=1 -Atc} (unaligned, tuples only: columns
     * separated by {@code |}, one row per line, no command tags) against {@link #database()} with a
     * 30 s deadline, and returns its standard output, trimmed. Several statements in one string run
     * in one implicit transaction unless the string says otherwise, and each query's rows are
     * printed. (Exception: SQL that the JVM's locale cannot put on a command line, such as non-ASCII
     * text under a C/POSIX locale, is fed to {@code psql -f -} on standard input, where each
     * statement commits on its own.)
     *
     * @throws PsqlException if psql exits non-zero (the message carries its standard error) or
     *     misses the deadline
     */
    public String psql(String sql) {
        return psql(DEFAULT_PSQL_TIMEOUT, sql);
    }

    /**
     * {@link #psql(String)} with the given deadline, which also bounds the connection attempt
     * ({@code PGCONNECT_TIMEOUT}, whole seconds, at least 1; libpq may round 1 up to 2). When the
     * deadline passes psql is killed; a statement it started may still run on the server.
     */
    public String psql(Duration timeout, String sql) {
        Objects.requireNonNull(timeout, "timeout");
        Objects.requireNonNull(sql, "sql");
        PostgresExec.Result result = node.client().psql(database(), sql, timeout);
        if (result.timedOut()) {
            throw new PsqlException("psql did not finish within " + timeout.toMillis() + " ms: " + sql,
                    -1, result.stderr().trim(), true);
        }
        if (result.exitCode() != 0) {
            throw new PsqlException("psql exited with code " + result.exitCode() + " running " + sql + ": "
                    + result.stderr().trim(), result.exitCode(), result.stderr().trim(), false);
        }
        return result.stdout().trim();
    }

    /**
     * {@code true} while the postmaster exists, including while paused; {@code false} after
     * {@link #stop()}, {@link #kill()} and {@link #close()}. Always {@code true} for a
     * {@code WARDEN_PG_URL} server, which testkit does not manage.
     */
    public boolean isRunning() {
        return node.isRunning();
    }

    /** {@code true} between {@link #pause()} and {@link #resume()}. */
    public boolean isPaused() {
        return node.isPaused();
    }

    /**
     * Freezes the server (SIGSTOP to the postmaster and to every backend and background process
     * below it): open connections stay open and nothing answers, new connections queue in the
     * listen backlog, like a stalled host.
     */
    public void pause() {
        node.pause();
    }

    /** Unfreezes a paused server (SIGCONT to all its processes); it then serves what queued up meanwhile. */
    public void resume() {
        node.resume();
    }

    /**
     * Kills the postmaster and all its children (SIGKILL), as a crash would, and waits until they are
     * gone and the port is free. {@link #restart()} then runs crash recovery; committed data survives.
     */
    public void kill() {
        node.kill();
    }

    /**
     * Fast shutdown (SIGINT: sessions are ended, a checkpoint is written) and waits for the exit; a
     * paused server is resumed first. Data stays; {@link #restart()} starts the server again. No-op
     * when it is not running.
     */
    public void stop() {
        node.stop();
    }

    /**
     * Starts the server again on the same port and data directory, after a {@link #stop()} or a
     * {@link #kill()} (crash recovery), or after a fast shutdown if it is running; waits until it
     * answers {@code select 1}.
     */
    public void restart() {
        node.restart();
    }

    /** Stops the server (resuming it first if paused) and deletes its directory; idempotent. */
    @Override
    public void close() {
        node.close();
    }

    @Override
    public String toString() {
        return "PostgresServer[" + host() + ":" + port() + "/" + database() + "]";
    }

    /** A failed or timed-out {@link #psql} call. */
    public static final class PsqlException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        private final int exitCode;
        private final String stderr;
        private final boolean timedOut;

        PsqlException(String message, int exitCode, String stderr, boolean timedOut) {
            super(message);
            this.exitCode = exitCode;
            this.stderr = stderr;
            this.timedOut = timedOut;
        }

        /** psql's exit code (1: error, 2: connection lost or refused, 3: script error), or -1 on timeout. */
        public int exitCode() {
            return exitCode;
        }

        /** psql's standard error, trimmed, for example {@code ERROR:  relation "t" does not exist}. */
        public String stderr() {
            return stderr;
        }

        /** {@code true} if psql was killed at the deadline. */
        public boolean timedOut() {
            return timedOut;
        }
    }

    /** Server options; each setting becomes a {@code postgres -c name=value} option. */
    public static final class Builder {

        private static final Set<String> RESERVED = Set.of("port", "listen_addresses", "unix_socket_directories",
                "data_directory", "config_file", "hba_file", "ident_file", "external_pid_file");
        private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

        private final Map<String, String> settings = new LinkedHashMap<>();
        private Function<String, String> env = System::getenv;

        private Builder() {
        }

        /**
         * A server setting, for example {@code setting("max_connections", "20")} or
         * {@code setting("synchronous_commit", "off")}. The port, listen address, socket directory
         * and data and configuration files belong to testkit. With {@code WARDEN_PG_URL}, the
         * server's current value must already be this one, since testkit does not reconfigure a
         * server it does not own.
         */
        public Builder setting(String name, String value) {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(value, "value");
            if (RESERVED.contains(name)) {
                throw new IllegalArgumentException("'" + name + "' is managed by testkit and cannot be set");
            }
            settings.put(name, value);
            return this;
        }

        Builder environment(Function<String, String> environment) {
            this.env = Objects.requireNonNull(environment);
            return this;
        }

        /** Resolves and starts the server; see {@link PostgresServer} for the order. */
        public PostgresServer start() {
            String url = env.apply("WARDEN_PG_URL");
            if (url != null && !url.isBlank()) {
                PostgresServer external = new PostgresServer(PostgresExternal.connect(url, env, CONNECT_TIMEOUT));
                settings.forEach((name, value) -> requireSetting(external, name, value));
                return external;
            }
            Map<String, String> launchSettings = new LinkedHashMap<>();
            launchSettings.put("fsync", "off");
            launchSettings.put("full_page_writes", "off");
            launchSettings.putAll(settings);
            return new PostgresServer(PostgresProcess.launch(PostgresBinaries.serverDirectory(env), launchSettings, env));
        }

        private static void requireSetting(PostgresServer server, String name, String value) {
            String actual = server.psql("select current_setting('" + name.replace("'", "''") + "')");
            if (!actual.equals(value)) {
                throw new IllegalStateException("the WARDEN_PG_URL server has " + name + "=" + actual + " but the test"
                        + " asks for " + value + ": testkit does not reconfigure a server it does not own; set it on"
                        + " that server, or unset WARDEN_PG_URL so testkit launches its own");
            }
        }
    }
}
