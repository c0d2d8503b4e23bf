package dev.warden.lock.etcd.internal;

import dev.warden.lock.Redaction;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;

/** Parses {@code etcd://host:port} endpoints into the {@code http://host:port} URIs of the members the driver dials. */
public final class Endpoints {

    private Endpoints() {
    }

    /** Every problem with the configured endpoints; empty when all are usable. */
    public static List<String> problems(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        if (endpoints.isEmpty()) {
            problems.add("configure at least one etcd://host:port endpoint");
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

    private static String problem(String endpoint) {
        String usage = " (use etcd://host:port)";
        URI uri;
        try {
            uri = new URI(endpoint.trim());
        } catch (URISyntaxException e) {
            return "endpoint '" + Redaction.redact(endpoint) + "' is not a URI" + usage + ": " + Redaction.redact(e.getReason());
        }
        if (!"etcd".equals(uri.getScheme())) {
            return "endpoint '" + Redaction.redact(endpoint) + "' does not start with etcd://" + usage
                    + (("etcds".equals(uri.getScheme()) || "https".equals(uri.getScheme())) ? "; TLS is not supported yet" : "");
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            return "endpoint '" + Redaction.redact(endpoint) + "' names no host" + usage;
        }
        if (uri.getPort() < 1) {
            return "endpoint '" + Redaction.redact(endpoint) + "' names no port" + usage;
        }
        if (uri.getUserInfo() != null) {
            return "endpoint '" + Redaction.redact(endpoint) + "' carries credentials: etcd authentication is not supported yet";
        }
        if ((uri.getPath() != null && !uri.getPath().isEmpty() && !"/".equals(uri.getPath())) || uri.getQuery() != null) {
            return "endpoint '" + Redaction.redact(endpoint) + "' has a path or query" + usage;
        }
        return null;
    }
}
