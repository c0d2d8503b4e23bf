package dev.warden.testkit.internal;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/** A server someone else runs, named by {@code WARDEN_PG_URL}: testkit neither owns nor stops it. */
public final class PostgresExternal implements PostgresNode {

    private static final String PREFIX = "jdbc:postgresql://";
    private static final String SHAPE = "WARDEN_PG_URL must look like jdbc:postgresql://host[:port]/database?user=name"
            + "[&password=secret][&sslmode=mode]";
    private static final String NO_FAULTS =
            " needs a server launched by testkit: unset WARDEN_PG_URL so testkit starts its own PostgreSQL";

    private final String url;
    private final String host;
    private final int port;
    private final String database;
    private final String user;
    private final PostgresClient client;

    private PostgresExternal(String url, String host, int port, String database, String user, PostgresClient client) {
        this.url = url;
        this.host = host;
        this.port = port;
        this.database = database;
        this.user = user;
        this.client = client;
    }

    /** Parses {@code url}, finds {@code psql}, and checks that the server answers {@code select 1}. */
    public static PostgresExternal connect(String url, Function<String, String> env, Duration timeout) {
        String trimmed = url.trim();
        if (!trimmed.startsWith(PREFIX)) {
            throw new IllegalArgumentException(SHAPE + ", was " + redact(trimmed));
        }
        URI parsed;
        try {
            parsed = new URI(trimmed.substring("jdbc:".length()));
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(SHAPE + ", was " + redact(trimmed), e);
        }
        String path = parsed.getPath();
        Map<String, String> params = query(parsed.getRawQuery());
        String user = params.get("user");
        if (parsed.getHost() == null || parsed.getUserInfo() != null || path == null || path.length() < 2
                || path.indexOf('/', 1) >= 0 || user == null || user.isEmpty()) {
            throw new IllegalArgumentException(SHAPE + " (one host; the database and the user are required), was "
                    + redact(trimmed));
        }
        String host = parsed.getHost().replace("[", "").replace("]", "");
        int port = parsed.getPort() < 0 ? 5432 : parsed.getPort();
        Path psql = PostgresBinaries.client("psql", env, null)
                .orElseThrow(() -> new IllegalStateException(PostgresBinaries.PSQL_NOT_FOUND));
        Path pgIsReady = PostgresBinaries.client("pg_isready", env, psql.getParent()).orElse(null);
        PostgresClient client = new PostgresClient(psql, pgIsReady, host, port, user,
                params.get("password"), params.get("sslmode"));
        String database = path.substring(1);
        PostgresExec.Result probe = client.psql(database, "select 1", timeout);
        if (!probe.ok()) {
            throw new IllegalStateException("WARDEN_PG_URL=" + redact(trimmed) + " does not answer select 1"
                    + (probe.timedOut() ? " within " + timeout.toMillis() + " ms" : "") + ": " + probe.stderr().trim());
        }
        return new PostgresExternal(trimmed, host, port, database, user, client);
    }

    @Override
    public String host() {
        return host;
    }

    @Override
    public int port() {
        return port;
    }

    @Override
    public String database() {
        return database;
    }

    @Override
    public String user() {
        return user;
    }

    /** The URL exactly as given, so driver options in it (sslmode, ...) reach the code under test. */
    @Override
    public String jdbcUrl() {
        return url;
    }

    @Override
    public PostgresClient client() {
        return client;
    }

    @Override
    public boolean isRunning() {
        return true;
    }

    @Override
    public boolean isPaused() {
        return false;
    }

    @Override
    public void pause() {
        throw new UnsupportedOperationException("pause" + NO_FAULTS);
    }

    @Override
    public void resume() {
        throw new UnsupportedOperationException("resume" + NO_FAULTS);
    }

    @Override
    public void kill() {
        throw new UnsupportedOperationException("kill" + NO_FAULTS);
    }

    @Override
    public void stop() {
        throw new UnsupportedOperationException("stop" + NO_FAULTS);
    }

    @Override
    public void restart() {
        throw new UnsupportedOperationException("restart" + NO_FAULTS);
    }

    @Override
    public void close() {
        // Not ours to stop.
    }

    @Override
    public String toString() {
        return redact(url);
    }

    private static Map<String, String> query(String rawQuery) {
        Map<String, String> params = new HashMap<>();
        if (rawQuery == null) {
            return params;
        }
        for (String pair : rawQuery.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                params.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        return params;
    }

    /** Hides a password so it does not end up in test reports. */
    static String redact(String url) {
        return url.replaceAll("(?i)(password=)[^&]*", "$1***");
    }
}
