package dev.warden.redis.internal;

import dev.warden.lock.Redaction;
import io.lettuce.core.RedisURI;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The one reading of a Redis endpoint setting, for the lock backend ({@code warden.lock.endpoints}) and
 * the quota engine ({@code warden.quota.endpoint}) alike, so one value serves both. One form per
 * deployment:
 * <ul>
 *   <li>one server: {@code redis://[[user]:password@]host[:port][/database]} ({@code rediss://} for TLS);</li>
 *   <li>Sentinel: {@code redis-sentinel://[[user]:password@]s1[:port],s2[:port],.../<master name>}
 *       ({@code rediss-sentinel://}; sentinel port 26379 by default; the credentials are the data
 *       nodes');</li>
 *   <li>Cluster: {@code redis-cluster://[[user]:password@]n1[:port],n2[:port],...}, seed nodes
 *       ({@code rediss-cluster://}).</li>
 * </ul>
 * A setting split at its commas arrives as several entries, each of which may repeat the scheme (the
 * form {@code LockClient.create(URI)} produces); they are joined again. Every problem is named, never
 * with the endpoint's credentials. Immutable, but {@link #uris()} are new Lettuce URIs for each parse,
 * which the caller configures (timeouts, logins) before connecting.
 */
public final class RedisEndpoint {

    /** The deployment an endpoint names. */
    public enum Kind { SERVER, SENTINEL, CLUSTER }

    private static final String FORMS = "redis://host:port, redis-sentinel://s1:26379,s2:26379/<master name> or"
            + " redis-cluster://n1:6379,n2:6379";

    private final Kind kind;
    private final List<RedisURI> uris;
    private final String described;

    private RedisEndpoint(Kind kind, List<RedisURI> uris, String described) {
        this.kind = kind;
        this.uris = List.copyOf(uris);
        this.described = described;
    }

    /** Every problem with {@code entries}; empty when they name one usable deployment. */
    public static List<String> problems(List<String> entries) {
        List<String> problems = new ArrayList<>();
        read(entries, problems);
        return problems;
    }

    /**
     * The deployment {@code entries} name.
     *
     * @throws IllegalArgumentException naming every problem, without credentials
     */
    public static RedisEndpoint parse(List<String> entries) {
        List<String> problems = new ArrayList<>();
        RedisEndpoint endpoint = read(entries, problems);
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", problems));
        }
        return endpoint;
    }

    /** {@link #parse(List)} of one setting's text. */
    public static RedisEndpoint parse(String text) {
        return parse(text == null ? List.of() : List.of(text));
    }

    public Kind kind() {
        return kind;
    }

    /** The server's URI, the Sentinel URI (its sentinels and master name), or a Cluster's seeds. */
    public List<RedisURI> uris() {
        return uris;
    }

    /** {@code redis://host:port[/db]}, {@code redis-sentinel://s1,s2/master} or {@code redis-cluster://n1,n2}, without credentials. */
    @Override
    public String toString() {
        return described;
    }

    private static RedisEndpoint read(List<String> given, List<String> problems) {
        // One entry may still hold a whole host list.
        List<String> entries = (given == null ? List.<String>of() : given).stream()
                .filter(e -> e != null).flatMap(e -> Arrays.stream(e.split(",")))
                .map(String::trim).filter(e -> !e.isEmpty()).toList();
        if (entries.isEmpty()) {
            problems.add("no Redis endpoint: configure " + FORMS);
            return null;
        }
        String first = entries.get(0);
        String scheme = schemeOf(first);
        if (scheme == null) {
            problems.add("endpoint '" + redact(first) + "' is not a Redis URI (" + FORMS + ")");
            return null;
        }
        return switch (scheme) {
            case "redis", "rediss" -> server(entries, problems);
            case "redis-sentinel", "rediss-sentinel" -> sentinel(scheme, entries, problems);
            case "redis-cluster", "rediss-cluster" -> cluster(scheme, entries, problems);
            default -> {
                problems.add("endpoint '" + redact(first) + "' has the scheme '" + scheme + "': use " + FORMS);
                yield null;
            }
        };
    }

    private static RedisEndpoint server(List<String> entries, List<String> problems) {
        if (entries.size() != 1) {
            problems.add("several Redis endpoints (" + entries.size() + ") name no topology: use one redis:// endpoint,"
                    + " redis-sentinel://s1:26379,s2:26379/<master name> for Sentinel, or redis-cluster://n1:6379,n2:6379"
                    + " for a Cluster");
        }
        RedisURI result = null;
        for (String entry : entries) {
            String shown = redact(entry);
            String authority = authorityOf(entry);
            if (authority != null && !authority.isEmpty() && HostPort.parse(authority, 6379) == null) {
                // Lettuce would take "127.0.0.1:notaport" for a host name and fail only at connect.
                problems.add("endpoint '" + shown + "': '" + redact(authority) + "' is not host[:port] with a port 1..65535");
                continue;
            }
            RedisURI uri;
            try {
                uri = RedisURI.create(entry);
            } catch (RuntimeException e) {
                // No cause kept: Lettuce's message may quote the URI with its password.
                String why = e.getMessage() == null ? e.getClass().getSimpleName() : redact(e.getMessage().replace(entry, shown));
                problems.add("endpoint '" + shown + "' is not a Redis URI (redis://[[user]:password@]host[:port][/database]"
                        + " or rediss://...): " + why);
                continue;
            }
            if (uri.getSocket() != null) {
                problems.add("endpoint '" + shown + "' is a Unix domain socket, which is not supported: use redis://host:port");
            } else if (uri.getHost() == null || uri.getHost().isBlank() || uri.getHost().contains(",")) {
                problems.add("endpoint '" + shown + "' does not name one host: use redis://host:port, or"
                        + " redis-cluster://n1,n2 for a Cluster");
            } else if (!schemeOf(entry).startsWith("redis")) {
                problems.add("endpoint '" + shown + "' is not a redis:// endpoint");
            } else if (result == null) {
                result = uri;
            }
        }
        if (!problems.isEmpty()) {
            return null;
        }
        return new RedisEndpoint(Kind.SERVER, List.of(result), (result.isSsl() ? "rediss://" : "redis://") + result.getHost()
                + ":" + result.getPort() + (result.getDatabase() == 0 ? "" : "/" + result.getDatabase()));
    }

    private static RedisEndpoint sentinel(String scheme, List<String> entries, List<String> problems) {
        HostList hosts = HostList.parse(scheme, entries, 26379, problems);
        if (hosts == null) {
            return null;
        }
        String master = hosts.path.startsWith("/") ? hosts.path.substring(1) : hosts.path;
        if (master.isEmpty() || master.contains("/")) {
            problems.add("endpoint '" + redact(String.join(",", entries)) + "' names no master: use "
                    + scheme + "://s1:26379,s2:26379/<master name>");
            return null;
        }
        String masterName = URLDecoder.decode(master, StandardCharsets.UTF_8);
        RedisURI.Builder b = RedisURI.Builder.sentinel(hosts.hosts.get(0).host, hosts.hosts.get(0).port, masterName);
        for (HostPort h : hosts.hosts.subList(1, hosts.hosts.size())) {
            b.withSentinel(h.host, h.port);
        }
        UserInfo.applyTo(b, hosts.userInfo);
        b.withSsl(scheme.startsWith("rediss"));
        return new RedisEndpoint(Kind.SENTINEL, List.of(b.build()), scheme + "://" + hosts.described() + "/" + masterName);
    }

    private static RedisEndpoint cluster(String scheme, List<String> entries, List<String> problems) {
        HostList hosts = HostList.parse(scheme, entries, 6379, problems);
        if (hosts == null) {
            return null;
        }
        if (!hosts.path.isEmpty() && !hosts.path.equals("/")) {
            problems.add("endpoint '" + redact(String.join(",", entries)) + "' names a database or path: a Cluster has"
                    + " only database 0; use " + scheme + "://n1:6379,n2:6379");
            return null;
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (HostPort h : hosts.hosts) {
            RedisURI.Builder b = RedisURI.Builder.redis(h.host, h.port);
            UserInfo.applyTo(b, hosts.userInfo);
            b.withSsl(scheme.startsWith("rediss"));
            seeds.add(b.build());
        }
        return new RedisEndpoint(Kind.CLUSTER, seeds, scheme + "://" + hosts.described());
    }

    private record HostPort(String host, int port) {

        /** {@code host[:port]} or {@code [v6]:port}, or null when it is not one. */
        static HostPort parse(String authority, int defaultPort) {
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

    /** The host list of one Sentinel or Cluster URI, its user-info and its path. */
    private record HostList(String userInfo, List<HostPort> hosts, String path) {

        static HostList parse(String scheme, List<String> entries, int defaultPort, List<String> problems) {
            String shownAll = redact(String.join(",", entries));
            String userInfo = null;
            String path = null;
            List<HostPort> hosts = new ArrayList<>();
            int before = problems.size();
            for (int i = 0; i < entries.size(); i++) {
                String entry = entries.get(i);
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
                HostPort h = HostPort.parse(authority, defaultPort);
                if (h == null) {
                    problems.add("endpoint '" + shownAll + "': '" + redact(authority) + "' is not host[:port]");
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

        String described() {
            return hosts.stream().map(h -> h.host + ":" + h.port).collect(Collectors.joining(","));
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

    private static String redact(String text) {
        return Redaction.redact(text);
    }
}
