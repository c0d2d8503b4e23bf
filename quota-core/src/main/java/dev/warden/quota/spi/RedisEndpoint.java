package dev.warden.quota.spi;

import dev.warden.lock.Redaction;
import dev.warden.redis.internal.UserInfo;
import io.lettuce.core.RedisURI;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The quota engine's Redis, as {@code warden.quota.endpoint} names it, in one of three forms (the
 * same the Redis lock backend takes, so one value can serve both):
 * <ul>
 *   <li>one server: {@code redis://[[user]:password@]host[:port][/database]} ({@code rediss://} for TLS);</li>
 *   <li>Sentinel: {@code redis-sentinel://[[user]:password@]s1[:26379],s2[:26379],.../<master name>}
 *       ({@code rediss-sentinel://}); the credentials are the data nodes';</li>
 *   <li>Cluster: {@code redis-cluster://[[user]:password@]n1[:6379],n2[:6379],...}, seed nodes
 *       ({@code rediss-cluster://}).</li>
 * </ul>
 * Immutable. Never shows its credentials: {@link #toString()} and every message leave them out.
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

    /**
     * @throws IllegalArgumentException saying what is wrong, without the endpoint's credentials
     */
    public static RedisEndpoint parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("no endpoint: use " + FORMS);
        }
        String shown = redact(text.trim());
        int sep = text.indexOf("://");
        String scheme = sep <= 0 ? "" : text.substring(0, sep).trim().toLowerCase(Locale.ROOT);
        String rest = sep <= 0 ? "" : text.substring(sep + 3).trim();
        boolean tls = scheme.startsWith("rediss");
        switch (scheme) {
            case "redis", "rediss" -> {
                // Lettuce would take "127.0.0.1:notaport" for a host name and fail only at connect.
                String authority = rest.split("[?#]", 2)[0];
                authority = authority.substring(authority.lastIndexOf('@') + 1).split("/", 2)[0];
                int colon = authority.lastIndexOf(':');
                if (colon >= 0 && !authority.endsWith("]") && !validPort(authority.substring(colon + 1))) {
                    throw new IllegalArgumentException("'" + shown + "': '" + redact(authority)
                            + "' is not host[:port] with a port 1..65535");
                }
                RedisURI uri;
                try {
                    uri = RedisURI.create(text.trim());
                } catch (RuntimeException e) {
                    // No cause: Lettuce's message may quote the URI with its password.
                    String why = e.getMessage() == null ? e.getClass().getSimpleName()
                            : redact(e.getMessage().replace(text.trim(), shown));
                    throw new IllegalArgumentException("'" + shown + "' is not a Redis URI: " + why);
                }
                if (uri.getHost() == null || uri.getHost().isBlank() || uri.getHost().contains(",")) {
                    throw new IllegalArgumentException("'" + shown + "' does not name one host: use " + FORMS);
                }
                return new RedisEndpoint(Kind.SERVER, List.of(uri), (tls ? "rediss://" : "redis://") + uri.getHost() + ":"
                        + uri.getPort() + (uri.getDatabase() == 0 ? "" : "/" + uri.getDatabase()));
            }
            case "redis-sentinel", "rediss-sentinel", "redis-cluster", "rediss-cluster" -> {
                return hostList(scheme, rest, shown, tls);
            }
            default -> throw new IllegalArgumentException("'" + shown + "' is not a Redis URI: use " + FORMS);
        }
    }

    private static RedisEndpoint hostList(String scheme, String rest, String shown, boolean tls) {
        boolean sentinel = scheme.contains("sentinel");
        if (rest.contains("?") || rest.contains("#")) {
            throw new IllegalArgumentException("'" + shown + "' has a query or fragment, which " + scheme + ":// does not take");
        }
        String userInfo = null;
        int at = rest.lastIndexOf('@');
        if (at >= 0) {
            userInfo = rest.substring(0, at);
            rest = rest.substring(at + 1);
        }
        int slash = rest.indexOf('/');
        String path = slash < 0 ? "" : rest.substring(slash + 1);
        String hosts = slash < 0 ? rest : rest.substring(0, slash);
        List<String[]> hostPorts = new ArrayList<>();
        for (String h : hosts.split(",")) {
            String t = h.trim();
            // LockClient.create(URI) style: each host may repeat the scheme.
            if (t.toLowerCase(Locale.ROOT).startsWith(scheme + "://")) {
                t = t.substring(scheme.length() + 3);
            }
            int colon = t.lastIndexOf(':');
            String host = colon < 0 ? t : t.substring(0, colon);
            String port = colon < 0 ? (sentinel ? "26379" : "6379") : t.substring(colon + 1);
            if (host.isEmpty() || !port.matches("[0-9]{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
                throw new IllegalArgumentException("'" + shown + "': '" + redact(t) + "' is not host[:port]");
            }
            hostPorts.add(new String[] {host, port});
        }
        if (sentinel && (path.isEmpty() || path.contains("/"))) {
            throw new IllegalArgumentException("'" + shown + "' names no master: use " + scheme + "://s1:26379,s2:26379/<master name>");
        }
        if (!sentinel && !path.isEmpty()) {
            throw new IllegalArgumentException("'" + shown + "' names a database or path: a Cluster has only database 0");
        }
        String described = scheme + "://" + hostPorts.stream().map(h -> h[0] + ":" + h[1]).collect(Collectors.joining(","))
                + (sentinel ? "/" + URLDecoder.decode(path, StandardCharsets.UTF_8) : "");
        if (sentinel) {
            RedisURI.Builder b = RedisURI.Builder.sentinel(hostPorts.get(0)[0], Integer.parseInt(hostPorts.get(0)[1]),
                    URLDecoder.decode(path, StandardCharsets.UTF_8));
            hostPorts.subList(1, hostPorts.size()).forEach(h -> b.withSentinel(h[0], Integer.parseInt(h[1])));
            UserInfo.applyTo(b, userInfo);
            return new RedisEndpoint(Kind.SENTINEL, List.of(b.withSsl(tls).build()), described);
        }
        List<RedisURI> seeds = new ArrayList<>();
        for (String[] h : hostPorts) {
            RedisURI.Builder b = RedisURI.Builder.redis(h[0], Integer.parseInt(h[1]));
            UserInfo.applyTo(b, userInfo);
            seeds.add(b.withSsl(tls).build());
        }
        return new RedisEndpoint(Kind.CLUSTER, seeds, described);
    }

    private static boolean validPort(String port) {
        return port.matches("[0-9]{1,5}") && Integer.parseInt(port) >= 1 && Integer.parseInt(port) <= 65535;
    }

    /** The text with every user-info part replaced by {@code ***}: for messages. */
    public static String redact(String text) {
        return Redaction.redact(text);
    }

    public Kind kind() {
        return kind;
    }

    /** The server or the Sentinel URI (with its sentinels and master name); for a Cluster, its seeds. */
    List<RedisURI> uris() {
        return uris;
    }

    /** The endpoint without credentials, for messages. */
    @Override
    public String toString() {
        return described;
    }
}
