package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Talks to one etcd member over its v3 JSON gateway ({@code /v3/...} on the client URL) and its
 * {@code /health} endpoint, with plain {@code java.net.http}, so testkit needs no etcd client
 * library and assertions never go through the client under test. Keys travel base64-encoded.
 *
 * <p>A member served over TLS, or with authentication on, is {@linkplain #register registered} with
 * its {@link Access}: the TLS context to reach it with (the test CA, the client certificate) and
 * the root user, whose token goes in the {@code Authorization} header of every call, renewed once
 * when the member refuses it (expired, or the member restarted).
 */
public final class EtcdHttp {

    private static final Pattern KEY = Pattern.compile("\"key\":\"([A-Za-z0-9+/=]*)\"");
    private static final Pattern COUNT = Pattern.compile("\"count\":\"(\\d+)\"");
    private static final Pattern DELETED = Pattern.compile("\"deleted\":\"(\\d+)\"");
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\":\"(\\d+)\"");
    private static final Pattern LEADER = Pattern.compile("\"leader\":\"(\\d+)\"");

    private static final Pattern TOKEN = Pattern.compile("\"token\":\"([^\"]*)\"");

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    /** How to reach members that use TLS or authentication, by client URL. */
    private static final java.util.Map<String, Access> ACCESS = new java.util.concurrent.ConcurrentHashMap<>();

    private EtcdHttp() {
    }

    /**
     * How to call one member: an HTTP client (with the TLS context, when it uses TLS) and, once
     * authentication is on, the root user's password and its last token.
     */
    public static final class Access {
        private final HttpClient http;
        private volatile String rootPassword;
        private volatile String token;

        public Access(javax.net.ssl.SSLContext tls) {
            HttpClient.Builder b = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).version(HttpClient.Version.HTTP_1_1);
            if (tls != null) {
                b.sslContext(tls);
            }
            this.http = b.build();
        }

        /** From now on, calls authenticate as root with this password. */
        public void root(String password) {
            this.rootPassword = password;
            this.token = null;
        }
    }

    /** Calls to {@code clientUrl} go through {@code access}. */
    public static void register(String clientUrl, Access access) {
        ACCESS.put(clientUrl, access);
    }

    /** Forgets a stopped member. */
    public static void unregister(String clientUrl) {
        ACCESS.remove(clientUrl);
    }

    private static HttpClient client(String clientUrl) {
        Access a = ACCESS.get(clientUrl);
        return a == null ? HTTP : a.http;
    }

    /**
     * A TLS context trusting the PKCS12 {@code trustStore} and presenting the client certificate of
     * {@code keyStore} (null for none); both stores opened with {@code password}.
     */
    public static javax.net.ssl.SSLContext sslContext(java.nio.file.Path trustStore, java.nio.file.Path keyStore, String password) {
        try {
            java.security.KeyStore ts = java.security.KeyStore.getInstance(trustStore.toFile(), password.toCharArray());
            javax.net.ssl.TrustManagerFactory tmf = javax.net.ssl.TrustManagerFactory.getInstance(
                    javax.net.ssl.TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ts);
            javax.net.ssl.KeyManager[] keys = null;
            if (keyStore != null) {
                java.security.KeyStore ks = java.security.KeyStore.getInstance(keyStore.toFile(), password.toCharArray());
                javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance(
                        javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(ks, password.toCharArray());
                keys = kmf.getKeyManagers();
            }
            javax.net.ssl.SSLContext context = javax.net.ssl.SSLContext.getInstance("TLS");
            context.init(keys, tmf.getTrustManagers(), null);
            return context;
        } catch (java.security.GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot build a TLS context from " + trustStore + " and " + keyStore, e);
        }
    }

    /** Adds the root user (with the root role) and turns authentication on; calls then authenticate as root. */
    public static void enableAuth(String clientUrl, String rootPassword, Duration timeout) {
        post(clientUrl, "/v3/auth/user/add", "{\"name\":\"root\",\"password\":\"" + json(rootPassword) + "\"}", timeout);
        post(clientUrl, "/v3/auth/user/grant", "{\"user\":\"root\",\"role\":\"root\"}", timeout);
        post(clientUrl, "/v3/auth/enable", "{}", timeout);
        ACCESS.computeIfAbsent(clientUrl, u -> new Access(null)).root(rootPassword);
    }

    /** Calls to {@code clientUrl} authenticate as root with {@code rootPassword}. */
    public static void rootAccess(String clientUrl, String rootPassword) {
        ACCESS.computeIfAbsent(clientUrl, u -> new Access(null)).root(rootPassword);
    }

    /** Adds {@code user} with {@code password} and a role of the same name with readwrite on every key starting with {@code prefix}. */
    public static void addUser(String clientUrl, String user, String password, String prefix, Duration timeout) {
        post(clientUrl, "/v3/auth/role/add", "{\"name\":\"" + json(user) + "\"}", timeout);
        post(clientUrl, "/v3/auth/role/grant", "{\"name\":\"" + json(user) + "\",\"perm\":{\"permType\":\"READWRITE\",\"key\":\""
                + b64(prefix) + "\",\"range_end\":\"" + b64(prefixEnd(prefix)) + "\"}}", timeout);
        post(clientUrl, "/v3/auth/user/add", "{\"name\":\"" + json(user) + "\",\"password\":\"" + json(password) + "\"}", timeout);
        post(clientUrl, "/v3/auth/user/grant", "{\"user\":\"" + json(user) + "\",\"role\":\"" + json(user) + "\"}", timeout);
    }

    /** A token for {@code user} from {@code /v3/auth/authenticate}. */
    public static String authenticate(String clientUrl, String user, String password, Duration timeout) {
        String body = send(clientUrl, "/v3/auth/authenticate", "{\"name\":\"" + json(user) + "\",\"password\":\""
                + json(password) + "\"}", timeout, null);
        Matcher m = TOKEN.matcher(body);
        if (!m.find()) {
            throw new IllegalStateException("etcd at " + clientUrl + " answered no token for " + user);
        }
        return m.group(1);
    }

    /**
     * One call to the JSON gateway with {@code token} (none when null) rather than root's: the
     * answer's body, or an {@link UncheckedIOException} whose message carries the refusal.
     */
    public static String postAs(String clientUrl, String path, String json, Duration timeout, String token) {
        return send(clientUrl, path, json, timeout, token);
    }

    private static String json(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }

    /** Whether {@code GET /health} answers {@code "health":"true"} (the member is up and has a leader). */
    public static boolean healthy(String clientUrl, Duration timeout) {
        try {
            HttpResponse<String> response = client(clientUrl).send(HttpRequest.newBuilder(URI.create(clientUrl + "/health"))
                    .timeout(timeout).GET().build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 && response.body().replace(" ", "").contains("\"health\":\"true\"");
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Keys (UTF-8) starting with {@code prefix}, in key order; a linearizable read. */
    public static List<String> keys(String clientUrl, String prefix, Duration timeout) {
        String body = post(clientUrl, "/v3/kv/range", "{\"key\":\"" + b64(prefix) + "\",\"range_end\":\""
                + b64(prefixEnd(prefix)) + "\",\"keys_only\":true}", timeout);
        List<String> keys = new ArrayList<>();
        Matcher m = KEY.matcher(body);
        while (m.find()) {
            keys.add(new String(Base64.getDecoder().decode(m.group(1)), StandardCharsets.UTF_8));
        }
        return keys;
    }

    /** How many keys start with {@code prefix}; a linearizable read. */
    public static long count(String clientUrl, String prefix, Duration timeout) {
        String body = post(clientUrl, "/v3/kv/range", "{\"key\":\"" + b64(prefix) + "\",\"range_end\":\""
                + b64(prefixEnd(prefix)) + "\",\"count_only\":true}", timeout);
        Matcher m = COUNT.matcher(body);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** Deletes every key starting with {@code prefix}; returns how many went. */
    public static long deletePrefix(String clientUrl, String prefix, Duration timeout) {
        String body = post(clientUrl, "/v3/kv/deleterange", "{\"key\":\"" + b64(prefix) + "\",\"range_end\":\""
                + b64(prefixEnd(prefix)) + "\"}", timeout);
        Matcher m = DELETED.matcher(body);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    /** Puts one key (both UTF-8). */
    public static void put(String clientUrl, String key, String value, Duration timeout) {
        post(clientUrl, "/v3/kv/put", "{\"key\":\"" + b64(key) + "\",\"value\":\"" + b64(value) + "\"}", timeout);
    }

    /** Deletes one key; returns whether it existed. */
    public static boolean delete(String clientUrl, String key, Duration timeout) {
        String body = post(clientUrl, "/v3/kv/deleterange", "{\"key\":\"" + b64(key) + "\"}", timeout);
        Matcher m = DELETED.matcher(body);
        return m.find() && Long.parseLong(m.group(1)) > 0;
    }

    /** Whether this member is the leader, from {@code /v3/maintenance/status}; empty if it does not answer. */
    public static Optional<Boolean> isLeader(String clientUrl, Duration timeout) {
        try {
            String body = post(clientUrl, "/v3/maintenance/status", "{}", timeout);
            Matcher member = MEMBER_ID.matcher(body);
            Matcher leader = LEADER.matcher(body);
            if (member.find() && leader.find()) {
                return Optional.of(member.group(1).equals(leader.group(1)));
            }
            return Optional.empty();
        } catch (UncheckedIOException e) {
            return Optional.empty();
        }
    }

    private static String post(String clientUrl, String path, String json, Duration timeout) {
        Access access = ACCESS.get(clientUrl);
        if (access == null || access.rootPassword == null) {
            return send(clientUrl, path, json, timeout, null);
        }
        String token = access.token;
        if (token == null) {
            token = access.token = authenticate(clientUrl, "root", access.rootPassword, timeout);
        }
        try {
            return send(clientUrl, path, json, timeout, token);
        } catch (TokenRefused e) {
            access.token = authenticate(clientUrl, "root", access.rootPassword, timeout);
            return send(clientUrl, path, json, timeout, access.token);
        }
    }

    /** The member refused the token: expired, or the member restarted and forgot it. */
    private static final class TokenRefused extends UncheckedIOException {
        private static final long serialVersionUID = 1L;

        TokenRefused(IOException cause) {
            super(cause);
        }
    }

    private static String send(String clientUrl, String path, String json, Duration timeout, String token) {
        try {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(clientUrl + path))
                    .timeout(timeout)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8));
            if (token != null) {
                request.header("Authorization", token);
            }
            HttpResponse<String> response = client(clientUrl).send(request.build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                IOException failure = new IOException("etcd at " + clientUrl + path + " answered HTTP "
                        + response.statusCode() + ": " + response.body());
                if (token != null && (response.statusCode() == 401 || response.body().contains("invalid auth token")
                        || response.body().contains("auth store is old"))) {
                    throw new TokenRefused(failure);
                }
                throw new UncheckedIOException(failure);
            }
            return response.body();
        } catch (IOException e) {
            throw new UncheckedIOException("etcd at " + clientUrl + path + " did not answer: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while calling etcd at " + clientUrl + path, e);
        }
    }

    private static String b64(String s) {
        return b64(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String b64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** The end of the range of keys starting with {@code prefix}: the prefix with its last byte incremented. */
    private static byte[] prefixEnd(String prefix) {
        byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
        for (int i = end.length - 1; i >= 0; i--) {
            if (end[i] != (byte) 0xff) {
                end[i]++;
                return java.util.Arrays.copyOf(end, i + 1);
            }
        }
        return new byte[] {0};
    }
}
