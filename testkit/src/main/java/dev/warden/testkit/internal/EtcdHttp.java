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
 */
public final class EtcdHttp {

    private static final Pattern KEY = Pattern.compile("\"key\":\"([A-Za-z0-9+/=]*)\"");
    private static final Pattern COUNT = Pattern.compile("\"count\":\"(\\d+)\"");
    private static final Pattern DELETED = Pattern.compile("\"deleted\":\"(\\d+)\"");
    private static final Pattern MEMBER_ID = Pattern.compile("\"member_id\":\"(\\d+)\"");
    private static final Pattern LEADER = Pattern.compile("\"leader\":\"(\\d+)\"");

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2))
            .version(HttpClient.Version.HTTP_1_1)
            .build();

    private EtcdHttp() {
    }

    /** Whether {@code GET /health} answers {@code "health":"true"} (the member is up and has a leader). */
    public static boolean healthy(String clientUrl, Duration timeout) {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(clientUrl + "/health"))
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
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(clientUrl + path))
                    .timeout(timeout)
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
                    .build(), HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 200) {
                throw new UncheckedIOException(new IOException("etcd at " + clientUrl + path + " answered HTTP "
                        + response.statusCode() + ": " + response.body()));
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
