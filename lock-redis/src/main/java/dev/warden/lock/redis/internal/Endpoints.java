package dev.warden.lock.redis.internal;

import io.lettuce.core.RedisURI;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Parses and checks endpoint URIs, and names them in messages without their credentials. */
public final class Endpoints {

    private static final Pattern USER_INFO = Pattern.compile("//[^/@]*@");

    private Endpoints() {
    }

    /** Every problem with the configured endpoints; empty when there is exactly one usable one. */
    public static List<String> problems(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        if (endpoints.size() != 1) {
            problems.add("Redis Cluster/Sentinel endpoints are not supported yet: configure exactly one"
                    + " redis:// or rediss:// endpoint (got " + endpoints.size() + ")");
        }
        for (String endpoint : endpoints) {
            String problem = problem(endpoint);
            if (problem != null) {
                problems.add(problem);
            }
        }
        return problems;
    }

    /** Parses an endpoint that {@link #problems} accepted. */
    static RedisURI parse(String endpoint) {
        return RedisURI.create(endpoint);
    }

    /** {@code redis://host:port/db}, without credentials, for messages. */
    static String describe(RedisURI uri) {
        return (uri.isSsl() ? "rediss://" : "redis://") + uri.getHost() + ":" + uri.getPort()
                + (uri.getDatabase() == 0 ? "" : "/" + uri.getDatabase());
    }

    private static String problem(String endpoint) {
        String shown = redact(endpoint);
        RedisURI uri;
        try {
            uri = RedisURI.create(endpoint);
        } catch (RuntimeException e) {
            String why = e.getMessage() == null ? e.toString() : e.getMessage().replace(endpoint, shown);
            return "endpoint '" + shown + "' is not a Redis URI (redis://[[user]:password@]host[:port][/database]"
                    + " or rediss://...): " + why;
        }
        if (!uri.getSentinels().isEmpty()) {
            return "endpoint '" + shown + "' is a Redis Sentinel URI: Redis Cluster/Sentinel endpoints are not supported yet";
        }
        if (uri.getSocket() != null) {
            return "endpoint '" + shown + "' is a Unix domain socket, which is not supported: use redis://host:port";
        }
        if (uri.getHost() == null || uri.getHost().isBlank() || uri.getHost().contains(",")) {
            return "endpoint '" + shown + "' does not name one host: use redis://host:port";
        }
        return null;
    }

    private static String redact(String endpoint) {
        return USER_INFO.matcher(endpoint).replaceFirst("//***@");
    }
}
