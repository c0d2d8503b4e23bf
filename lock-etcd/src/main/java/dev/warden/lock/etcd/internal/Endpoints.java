package dev.warden.lock.etcd.internal;

import dev.warden.lock.Redaction;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;

/**
 * Parses {@code etcd://host:port} (plain-text gRPC) and {@code etcds://host:port} (gRPC over TLS)
 * endpoints into the {@code http://host:port} URIs of the members the driver dials. Every endpoint
 * of a client uses the same scheme.
 */
public final class Endpoints {

    private Endpoints() {
    }

    /** Every problem with the configured endpoints; empty when all are usable. */
    public static List<String> problems(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        if (endpoints.isEmpty()) {
            problems.add("configure at least one etcd://host:port endpoint");
        }
        long secure = endpoints.stream().filter(Endpoints::isTls).count();
        if (secure > 0 && secure < endpoints.size()) {
            problems.add("endpoints mix etcd:// and etcds://: use etcds:// (TLS) for every member or for none");
        }
        for (String endpoint : endpoints) {
            String problem = problem(endpoint);
            if (problem != null) {
                problems.add(problem);
            }
        }
        return problems;
    }

    /** The gRPC URIs of endpoints that {@link #problems} accepted. */
    static List<URI> parse(List<String> endpoints) {
        List<URI> uris = new ArrayList<>();
        for (String endpoint : endpoints) {
            URI uri = URI.create(endpoint.trim());
            uris.add(URI.create("http://" + uri.getHost() + ":" + uri.getPort()));
        }
        return uris;
    }

    /** Whether the endpoints ask for TLS ({@code etcds://}). */
    public static boolean tls(List<String> endpoints) {
        return !endpoints.isEmpty() && endpoints.stream().allMatch(Endpoints::isTls);
    }

    private static boolean isTls(String endpoint) {
        return endpoint.trim().toLowerCase(java.util.Locale.ROOT).startsWith("etcds:");
    }

    private static String problem(String endpoint) {
        String usage = " (use etcd://host:port, or etcds://host:port for TLS)";
        URI uri;
        try {
            uri = new URI(endpoint.trim());
        } catch (URISyntaxException e) {
            return "endpoint '" + Redaction.redact(endpoint) + "' is not a URI" + usage + ": " + Redaction.redact(e.getReason());
        }
        if (!"etcd".equals(uri.getScheme()) && !"etcds".equals(uri.getScheme())) {
            return "endpoint '" + Redaction.redact(endpoint) + "' does not start with etcd:// or etcds://" + usage;
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            return "endpoint '" + Redaction.redact(endpoint) + "' names no host" + usage;
        }
        if (uri.getPort() < 1) {
            return "endpoint '" + Redaction.redact(endpoint) + "' names no port" + usage;
        }
        if (uri.getUserInfo() != null) {
            return "endpoint '" + Redaction.redact(endpoint) + "' carries credentials: set warden.lock.etcd.username and"
                    + " warden.lock.etcd.password (or password-file, password-env) instead";
        }
        if ((uri.getPath() != null && !uri.getPath().isEmpty() && !"/".equals(uri.getPath())) || uri.getQuery() != null) {
            return "endpoint '" + Redaction.redact(endpoint) + "' has a path or query" + usage;
        }
        return null;
    }
}
