package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.Redaction;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;

/** Parses {@code zookeeper://host[:port]} endpoints into a ZooKeeper connect string. */
public final class Endpoints {

    static final int DEFAULT_PORT = 2181;

    private Endpoints() {
    }

    /** Every problem with the configured endpoints; empty when each names one ZooKeeper server. */
    public static List<String> problems(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        if (endpoints.isEmpty()) {
            problems.add("at least one zookeeper://host:port endpoint is required");
        }
        for (String endpoint : endpoints) {
            try {
                parse(endpoint);
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        return problems;
    }

    /** {@code host1:port1,host2:port2,...}, in the order configured. */
    static String connectString(List<String> endpoints) {
        List<String> hosts = new ArrayList<>();
        for (String endpoint : endpoints) {
            hosts.add(parse(endpoint));
        }
        return String.join(",", hosts);
    }

    /** {@code host:port} of one endpoint. */
    static String parse(String endpoint) {
        URI uri;
        try {
            uri = new URI(endpoint);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' is not a URI (zookeeper://host:port): "
                    + Redaction.redact(e.getReason()));
        }
        if (!"zookeeper".equals(uri.getScheme())) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' must start with zookeeper:// (one server each;"
                    + " list every member of an ensemble, comma-separated)");
        }
        if (uri.getHost() == null || uri.getHost().isBlank()) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' does not name one host: use zookeeper://host:port");
        }
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' has credentials, which are not supported:"
                    + " use warden.lock.zookeeper.username and password (or password-file, password-env)");
        }
        String path = uri.getRawPath();
        if (path != null && !path.isEmpty() && !path.equals("/")) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' has a path (a chroot), which is not supported:"
                    + " use warden.lock.namespace");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' has a query or fragment, which is not supported");
        }
        int port = uri.getPort() == -1 ? DEFAULT_PORT : uri.getPort();
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint '" + Redaction.redact(endpoint) + "' has port " + port + " outside 1..65535");
        }
        return uri.getHost() + ":" + port;
    }
}
