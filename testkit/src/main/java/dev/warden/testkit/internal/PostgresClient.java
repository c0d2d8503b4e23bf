package dev.warden.testkit.internal;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Talks to one PostgreSQL endpoint through the {@code psql} and {@code pg_isready} binaries, so
 * testkit needs no JDBC driver and tests read the database independently of the code under test.
 */
public final class PostgresClient {

    private static final Duration READY_TIMEOUT = Duration.ofSeconds(5);

    private final Path psql;
    private final Path pgIsReady;
    private final String host;
    private final int port;
    private final String user;
    private final String password;
    private final String sslMode;

    PostgresClient(Path psql, Path pgIsReady, String host, int port, String user, String password, String sslMode) {
        this.psql = psql;
        this.pgIsReady = pgIsReady;
        this.host = host;
        this.port = port;
        this.user = user;
        this.password = password;
        this.sslMode = sslMode;
    }

    /**
     * Runs {@code psql -X -w -q -v ON_ERROR_STOP=1 -At -c SQL} against {@code database}, killing it
     * after {@code timeout} ({@code PGCONNECT_TIMEOUT} is set too, so a frozen server fails the
     * connection rather than only the deadline). SQL that the JVM's locale cannot put on a command
     * line (non-ASCII under a C/POSIX locale) goes through standard input ({@code -f -}) instead.
     */
    public PostgresExec.Result psql(String database, String sql, Duration timeout) {
        List<String> command = new ArrayList<>(List.of(psql.toString(), "-X", "-w", "-q",
                "-h", host, "-p", Integer.toString(port), "-U", user, "-d", database,
                "-v", "ON_ERROR_STOP=1", "-A", "-t"));
        byte[] stdin = null;
        if (commandLineCanCarry(sql)) {
            command.add("-c");
            command.add(sql);
        } else {
            command.add("-f");
            command.add("-");
            stdin = sql.getBytes(StandardCharsets.UTF_8);
        }
        long connectSeconds = Math.max(1, (timeout.toMillis() + 999) / 1000);
        return PostgresExec.run(command, environment(connectSeconds), stdin, timeout);
    }

    /** {@code pg_isready} exits 0: the server accepts connections (not merely starting up or recovering). */
    public boolean isReady(String database) {
        if (pgIsReady == null) {
            return psql(database, "select 1", READY_TIMEOUT).ok();
        }
        List<String> command = List.of(pgIsReady.toString(), "-q", "-h", host, "-p", Integer.toString(port),
                "-U", user, "-d", database, "-t", "2");
        return PostgresExec.run(command, environment(2), null, READY_TIMEOUT).ok();
    }

    private Map<String, String> environment(long connectTimeoutSeconds) {
        Map<String, String> env = new HashMap<>();
        env.put("PGCONNECT_TIMEOUT", Long.toString(connectTimeoutSeconds));
        env.put("PGCLIENTENCODING", "UTF8");
        env.put("PGAPPNAME", "warden-testkit");
        if (password != null) {
            env.put("PGPASSWORD", password);
        }
        if (sslMode != null) {
            env.put("PGSSLMODE", sslMode);
        }
        return env;
    }

    /** Java 17 encodes command-line arguments in the default charset; anything it cannot encode becomes '?'. */
    private static boolean commandLineCanCarry(String sql) {
        try {
            Charset jnu = Charset.forName(System.getProperty("sun.jnu.encoding", Charset.defaultCharset().name()));
            return Charset.defaultCharset().newEncoder().canEncode(sql) && jnu.newEncoder().canEncode(sql);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
