package dev.warden.lock.redis.internal;

import dev.warden.lock.Redaction;
import dev.warden.redis.internal.UserInfo;
import io.lettuce.core.RedisURI;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Parses and checks the endpoints setting into a {@link Topology}, and names endpoints in messages
 * without their credentials. One documented form per topology:
 * <ul>
 *   <li>one server: {@code redis://[[user]:password@]host[:port][/database]} ({@code rediss://} for TLS);</li>
 *   <li>Sentinel: {@code redis-sentinel://[[user]:password@]s1[:port],s2[:port],.../<master name>}
 *       ({@code rediss-sentinel://} for TLS; sentinel port 26379 by default; credentials are the data
 *       nodes');</li>
 *   <li>Cluster: {@code redis-cluster://[[user]:password@]n1[:port],n2[:port],...} (seed nodes;
 *       {@code rediss-cluster://} for TLS).</li>
 * </ul>
 * The endpoints setting is split at commas before it gets here, so the host list of one Sentinel or
 * Cluster URI arrives as several entries; each may also repeat the scheme (the form
 * {@code LockClient.create(URI)} produces). They are joined again.
 */
public final class Endpoints {

    private static final String FORMS = "redis://host:port, redis-sentinel://s1:26379,s2:26379/<master name> or"
            + " redis-cluster://n1:6379,n2:6379";

    private Endpoints() {
    }

    /** Every problem with the configured endpoints; empty when they name one usable topology. */
    public static List<String> problems(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        parse(endpoints, problems);
        return problems;
    }

    /** The topology of endpoints that {@link #problems} accepted. */
    static Topology topology(List<String> endpoints) {
        List<String> problems = new ArrayList<>();
        Topology topology = parse(endpoints, problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        return topology;
    }

    private static Topology parse(List<String> given, List<String> problems) {
        // One entry may still hold a whole host list (a LockConfig built by hand).
        List<String> endpoints = given.stream().flatMap(e -> java.util.Arrays.stream(e.split(","))).map(String::trim)
                .filter(e -> !e.isEmpty()).toList();
        if (endpoints.isEmpty()) {
            problems.add("no Redis endpoint: configure " + FORMS);
            return null;
        }
        String first = endpoints.get(0);
        String scheme = schemeOf(first);
        if (scheme == null) {
            problems.add("endpoint '" + redact(first) + "' is not a Redis URI (" + FORMS + ")");
            return null;
        }
        return switch (scheme) {
            case "redis", "rediss" -> standalone(endpoints, problems);
            case "redis-sentinel", "rediss-sentinel" -> sentinel(scheme, endpoints, problems);
            case "redis-cluster", "rediss-cluster" -> cluster(scheme, endpoints, problems);
            default -> {
                problems.add("endpoint '" + redact(first) + "' has the scheme '" + scheme + "': use " + FORMS);
                yield null;
            }
        };
    }

    private static Topology standalone(List<String> endpoints, List<String> problems) {
        if (endpoints.size() != 1) {
            problems.add("several Redis endpoints (" + endpoints.size() + ") name no topology: use one redis:// endpoint,"
                    + " redis-sentinel://s1:26379,s2:26379/<master name> for Sentinel, or redis-cluster://n1:6379,n2:6379"
                    + " for a Cluster");
        }
        RedisURI result = null;
        for (String endpoint : endpoints) {
            String shown = redact(endpoint);
            String authority = authorityOf(endpoint);
            if (authority != null && !authority.isEmpty() && HostList.hostPort(authority, 6379) == null) {
                // Lettuce would take "127.0.0.1:notaport" for a host name and fail only at connect.
                problems.add("endpoint '" + shown + "': '" + redact(authority) + "' is not host[:port] with a port 1..65535");
                continue;
            }
            RedisURI uri;
            try {
                uri = RedisURI.create(endpoint);
            } catch (RuntimeException e) {
                String why = e.getMessage() == null ? e.toString() : redact(e.getMessage().replace(endpoint, shown));
                problems.add("endpoint '" + shown + "' is not a Redis URI (redis://[[user]:password@]host[:port][/database]"
                        + " or rediss://...): " + why);
                continue;
            }
            if (uri.getSocket() != null) {
                problems.add("endpoint '" + shown + "' is a Unix domain socket, which is not supported: use redis://host:port");
            } else if (uri.getHost() == null || uri.getHost().isBlank() || uri.getHost().contains(",")) {
                problems.add("endpoint '" + shown + "' does not name one host: use redis://host:port, or"
                        + " redis-cluster://n1,n2 for a Cluster");
            } else if (!schemeOf(endpoint).startsWith("redis")) {
                problems.add("endpoint '" + shown + "' is not a redis:// endpoint");
            } else if (result == null) {
                result = uri;
            }
        }
        return problems.isEmpty() ? new Topology.Standalone(result) : null;
    }

    private static Topology sentinel(String scheme, List<String> endpoints, List<String> problems) {
        HostList hosts = HostList.parse(scheme, endpoints, 26379, problems);
        if (hosts == null) {
            return null;
        }
        String master = hosts.path.startsWith("/") ? hosts.path.substring(1) : hosts.path;
        if (master.isEmpty() || master.contains("/")) {
            problems.add("endpoint '" + redact(String.join(",", endpoints)) + "' names no master: use "
                    + scheme + "://s1:26379,s2:26379/<master name>");
            return null;
        }
        RedisURI.Builder b = RedisURI.Builder.sentinel(hosts.hosts.get(0).host, hosts.hosts.get(0).port,
                URLDecoder.decode(master, StandardCharsets.UTF_8));
        for (HostPort h : hosts.hosts.subList(1, hosts.hosts.size())) {
            b.withSentinel(h.host, h.port);
        }
        hosts.credentials(b);
        b.withSsl(scheme.startsWith("rediss"));
        return new Topology.Sentinel(b.build());
    }

    private static Topology cluster(String scheme, List<String> endpoints, List<String> problems) {
        HostList hosts = HostList.parse(scheme, endpoints, 6379, problems);
        if (hosts == null) {
            return null;
        }
        if (!hosts.path.isEmpty() && !hosts.path.equals("/")) {
            problems.add("endpoint '" + redact(String.join(",", endpoints)) + "' names a database or path: a Cluster has"
                    + " only database 0; use " + scheme + "://n1:6379,n2:6379");
            return null;
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (HostPort h : hosts.hosts) {
            RedisURI.Builder b = RedisURI.Builder.redis(h.host, h.port);
            hosts.credentials(b);
            b.withSsl(scheme.startsWith("rediss"));
            seeds.add(b.build());
        }
        return new Topology.Cluster(seeds);
    }

    private record HostPort(String host, int port) {
    }

    /** The host list of one Sentinel or Cluster URI, its credentials and its path. */
    private record HostList(String userInfo, List<HostPort> hosts, String path) {

        static HostList parse(String scheme, List<String> endpoints, int defaultPort, List<String> problems) {
            String shownAll = redact(String.join(",", endpoints));
            String userInfo = null;
            String path = null;
            List<HostPort> hosts = new ArrayList<>();
            int before = problems.size();
            for (int i = 0; i < endpoints.size(); i++) {
                String entry = endpoints.get(i).trim();
                String entryScheme = schemeOf(entry);
                String rest;
                if (entryScheme != null) {
                    if (!entryScheme.equals(scheme)) {
                        problems.add("endpoint '" + shownAll + "' mixes the schemes " + scheme + " and " + entryScheme);
                        continue;
                    }
                    rest = entry.substring(entry.indexOf("://") + 3);
                } else if (i == 0) {
                    problems.add("endpoint '" + shownAll + "' is not a Redis URI (" + FORMS + ")");
                    continue;
                } else {
                    rest = entry;
                }
                if (rest.contains("?") || rest.contains("#")) {
                    problems.add("endpoint '" + shownAll + "' has a query or fragment, which " + scheme + ":// does not take");
                    continue;
                }
                int at = rest.lastIndexOf('@');
                if (at >= 0) {
                    String info = rest.substring(0, at);
                    if (userInfo != null && !userInfo.equals(info)) {
                        problems.add("endpoint '" + shownAll + "' names different credentials for different hosts");
                    }
                    userInfo = info;
                    rest = rest.substring(at + 1);
                }
                int slash = rest.indexOf('/');
                String authority = slash < 0 ? rest : rest.substring(0, slash);
                if (slash >= 0) {
                    String p = rest.substring(slash);
                    if (path != null && !path.equals(p)) {
                        problems.add("endpoint '" + shownAll + "' names two different paths");
                    }
                    path = p;
                }
                HostPort h = hostPort(authority, defaultPort);
                if (h == null) {
                    problems.add("endpoint '" + shownAll + "': '" + authority + "' is not host[:port]");
                } else {
                    hosts.add(h);
                }
            }
            if (problems.size() > before) {
                return null;
            }
            if (hosts.isEmpty()) {
                problems.add("endpoint '" + shownAll + "' names no host");
                return null;
            }
            return new HostList(userInfo, List.copyOf(hosts), path == null ? "" : path);
        }

        void credentials(RedisURI.Builder b) {
            UserInfo.applyTo(b, userInfo);
        }

        private static HostPort hostPort(String authority, int defaultPort) {
            String host;
            String port = null;
            if (authority.startsWith("[")) {
                int close = authority.indexOf(']');
                if (close < 0) {
                    return null;
                }
                host = authority.substring(1, close);
                if (close + 1 < authority.length()) {
                    if (authority.charAt(close + 1) != ':') {
                        return null;
                    }
                    port = authority.substring(close + 2);
                }
            } else {
                int colon = authority.lastIndexOf(':');
                host = colon < 0 ? authority : authority.substring(0, colon);
                port = colon < 0 ? null : authority.substring(colon + 1);
            }
            if (host.isBlank() || host.contains(":") && !authority.startsWith("[")) {
                return null;
            }
            try {
                int p = port == null ? defaultPort : Integer.parseInt(port);
                return p < 1 || p > 65535 ? null : new HostPort(host, p);
            } catch (NumberFormatException e) {
                return null;
            }
        }
    }

    /** The host[:port] of a redis:// or rediss:// endpoint (without credentials, path or query), or null. */
    private static String authorityOf(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep <= 0) {
            return null;
        }
        String rest = endpoint.substring(sep + 3).split("[?#]", 2)[0];
        // After the last '@' first: a raw '/' in a password must not end the authority early.
        rest = rest.substring(rest.lastIndexOf('@') + 1);
        int slash = rest.indexOf('/');
        return slash < 0 ? rest : rest.substring(0, slash);
    }

    /** The scheme before {@code ://}, lower case, or null. */
    private static String schemeOf(String endpoint) {
        int sep = endpoint.indexOf("://");
        if (sep <= 0) {
            return null;
        }
        String scheme = endpoint.substring(0, sep).toLowerCase(Locale.ROOT);
        return scheme.matches("[a-z][a-z0-9+.-]*") ? scheme : null;
    }

    static String redact(String endpoint) {
        return Redaction.redact(endpoint);
    }
}
