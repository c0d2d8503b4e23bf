package dev.warden.testkit.internal;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

/** A server someone else runs, named by {@code WARDEN_REDIS_URI}: testkit neither owns nor stops it. */
public final class ExternalRedis implements RedisNode {

    private static final String NO_FAULTS =
            " needs a server launched by testkit: unset WARDEN_REDIS_URI so testkit starts its own redis-server";

    private final String host;
    private final int port;

    private ExternalRedis(String host, int port) {
        this.host = host;
        this.port = port;
    }

    /**
     * Parses {@code redis://host[:port]}, applies {@code config} with CONFIG SET, and checks that the
     * server answers.
     */
    public static ExternalRedis connect(String uri, Map<String, String> config, Duration timeout) {
        URI parsed = URI.create(uri.trim());
        boolean plainPath = parsed.getPath() == null || parsed.getPath().isEmpty() || parsed.getPath().equals("/");
        if (!"redis".equals(parsed.getScheme()) || parsed.getHost() == null || parsed.getUserInfo() != null
                || !plainPath || parsed.getQuery() != null) {
            throw new IllegalArgumentException(
                    "WARDEN_REDIS_URI must look like redis://host:port (no password, database or TLS), was " + uri);
        }
        ExternalRedis redis = new ExternalRedis(parsed.getHost(), parsed.getPort() < 0 ? 6379 : parsed.getPort());
        if (!RespConnection.answersPong(redis.host, redis.port, timeout)) {
            throw new IllegalStateException("WARDEN_REDIS_URI=" + uri + " does not answer PING");
        }
        config.forEach((name, value) -> RespConnection.callOnce(redis.host, redis.port, timeout, "CONFIG", "SET", name, value));
        return redis;
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
    public void restart() {
        throw new UnsupportedOperationException("restart" + NO_FAULTS);
    }

    @Override
    public void stop() {
        // Not ours to stop.
    }
}
