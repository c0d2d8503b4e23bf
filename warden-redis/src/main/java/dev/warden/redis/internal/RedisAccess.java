package dev.warden.redis.internal;

import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;
import dev.warden.lock.settings.AccessSettings;
import dev.warden.lock.settings.Setting;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * How Warden logs in to Redis and verifies it, from settings under one prefix
 * ({@code warden.lock.redis.} for the lock backend, {@code warden.quota.redis.} for the quota engine),
 * as an alternative to the endpoint's user-info:
 * <ul>
 *   <li>{@code username} (an ACL user; the default user when unset) and one of {@code password},
 *       {@code password-file} (a file holding it) or {@code password-env} (the name of an environment
 *       variable holding it): the data nodes' login;</li>
 *   <li>{@code sentinel.username} and {@code sentinel.password[-file|-env]}: the sentinels' own login, for
 *       {@code redis-sentinel://} (Redis lets sentinels and data nodes have different users, so neither is
 *       inferred from the other);</li>
 *   <li>{@code tls.trust-store} (PKCS12 or JKS of the CAs to trust; the JVM's default trust when unset) and,
 *       for mutual TLS, {@code tls.key-store}, each with its password inline, {@code -file} or {@code -env},
 *       for {@code rediss://}. The server's certificate and host name are always verified.</li>
 * </ul>
 * {@link #toString()} masks every password.
 *
 * @param prefix where the settings live, for messages ({@code warden.quota.redis.})
 */
public record RedisAccess(String prefix, Optional<String> username, Optional<String> password,
                          Optional<String> sentinelUsername, Optional<String> sentinelPassword,
                          Optional<Path> trustStore, Optional<String> trustStorePassword,
                          Optional<Path> keyStore, Optional<String> keyStorePassword) {

    /** The login settings, without the prefix. */
    public static final Set<String> LOGIN_OPTIONS = Set.of("username", "password", "password-file", "password-env",
            "sentinel.username", "sentinel.password", "sentinel.password-file", "sentinel.password-env");
    /** The TLS settings, without the prefix. */
    public static final Set<String> TLS_OPTIONS = Set.of("tls.trust-store", "tls.trust-store-password",
            "tls.trust-store-password-file", "tls.trust-store-password-env", "tls.key-store", "tls.key-store-password",
            "tls.key-store-password-file", "tls.key-store-password-env");

    /** The login, sentinel login and TLS settings under {@code prefix}, declared once for the lock and the quota engine. */
    public static List<Setting<?>> settings(String prefix) {
        List<Setting<?>> settings = new ArrayList<>(AccessSettings.login(prefix, "the data nodes' ACL"));
        settings.addAll(AccessSettings.login(prefix + "sentinel.", "for redis-sentinel://: the sentinels' own ACL"));
        settings.addAll(AccessSettings.tls(prefix));
        return List.copyOf(settings);
    }

    /**
     * The access {@code options} give; nothing set means none (the endpoint's user-info, if any, applies).
     *
     * @param options keyed without the prefix ({@code username}, {@code tls.trust-store})
     * @param environment how {@code *-env} settings are read ({@code System::getenv})
     * @throws IllegalArgumentException naming the setting and what is wrong, never a secret
     */
    public static RedisAccess read(String prefix, Map<String, String> options, Function<String, String> environment) {
        Map<String, String> prefixed = new LinkedHashMap<>();
        options.forEach((k, v) -> prefixed.put(prefix + k, v));
        return new RedisAccess(prefix, text(options, "username"),
                WardenSettings.secret(prefixed, prefix + "password", environment),
                text(options, "sentinel.username"),
                WardenSettings.secret(prefixed, prefix + "sentinel.password", environment),
                text(options, "tls.trust-store").map(Path::of),
                WardenSettings.secret(prefixed, prefix + "tls.trust-store-password", environment),
                text(options, "tls.key-store").map(Path::of),
                WardenSettings.secret(prefixed, prefix + "tls.key-store-password", environment));
    }

    /** No login or TLS settings. */
    public static RedisAccess none(String prefix) {
        return new RedisAccess(prefix, Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(),
                Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());
    }

    /**
     * Every problem with the access settings for {@code endpoints}; empty when they are usable: a user
     * without a password, a password given both here and in the endpoint, sentinel or TLS settings for an
     * endpoint they do not apply to, a store that cannot be read.
     */
    public static List<String> problems(String prefix, List<String> endpoints, Map<String, String> options,
                                        Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        RedisAccess access;
        try {
            access = read(prefix, options, environment);
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
            return problems;
        }
        if (access.username.isPresent() && access.password.isEmpty()) {
            problems.add(prefix + "username needs a password (" + prefix + "password, password-file or password-env)");
        }
        if (access.password.isPresent() && endpoints.stream().anyMatch(e -> !Redaction.redact(e).equals(e))) {
            problems.add("the endpoint carries credentials and " + prefix + "password is set too: keep one");
        }
        if (access.sentinelUsername.isPresent() && access.sentinelPassword.isEmpty()) {
            problems.add(prefix + "sentinel.username needs a password (" + prefix
                    + "sentinel.password, sentinel.password-file or sentinel.password-env)");
        }
        // The setting may arrive split at its commas; the scheme is the first entry's.
        String scheme = endpoints.isEmpty() ? "" : endpoints.get(0).trim().toLowerCase(Locale.ROOT);
        if ((access.sentinelUsername.isPresent() || access.sentinelPassword.isPresent())
                && !scheme.startsWith("redis-sentinel:") && !scheme.startsWith("rediss-sentinel:")) {
            problems.add(prefix + "sentinel.* settings apply to redis-sentinel:// endpoints only");
        }
        if (options.keySet().stream().anyMatch(TLS_OPTIONS::contains) && !scheme.startsWith("rediss")) {
            problems.add(prefix + "tls.* is set but the endpoint is not rediss://, rediss-sentinel:// or rediss-cluster://");
        }
        access.trustStore.filter(p -> !Files.isReadable(p))
                .ifPresent(p -> problems.add(prefix + "tls.trust-store '" + p + "' is not a readable file"));
        access.keyStore.filter(p -> !Files.isReadable(p))
                .ifPresent(p -> problems.add(prefix + "tls.key-store '" + p + "' is not a readable file"));
        return problems;
    }

    /** Sets the data nodes' login on {@code uri} and the sentinels' login on its sentinels, when there are any. */
    public void applyTo(RedisURI uri) {
        login(uri, username, password);
        uri.getSentinels().forEach(sentinel -> login(sentinel, sentinelUsername, sentinelPassword));
    }

    /** Lettuce's TLS options for the stores; null when none is set (the JVM's defaults apply). */
    public SslOptions sslOptions() {
        if (trustStore.isEmpty() && keyStore.isEmpty()) {
            return null;
        }
        SslOptions.Builder b = SslOptions.builder().jdkSslProvider();
        trustStore.ifPresent(p -> b.truststore(p.toFile(), trustStorePassword.orElse(null)));
        keyStore.ifPresent(p -> b.keystore(p.toFile(), keyStorePassword.map(String::toCharArray).orElse(null)));
        return b.build();
    }

    private static void login(RedisURI uri, Optional<String> username, Optional<String> password) {
        password.ifPresent(p -> {
            if (username.isPresent()) {
                uri.setAuthentication(username.get(), p.toCharArray());
            } else {
                uri.setAuthentication(p.toCharArray());
            }
        });
    }

    private static Optional<String> text(Map<String, String> options, String key) {
        return Optional.ofNullable(options.get(key)).map(String::trim).filter(v -> !v.isEmpty());
    }

    @Override
    public String toString() {
        return "RedisAccess[" + prefix + " username=" + username.orElse("-") + ", password=" + masked(password)
                + ", sentinelUsername=" + sentinelUsername.orElse("-") + ", sentinelPassword=" + masked(sentinelPassword)
                + ", trustStore=" + trustStore.map(Path::toString).orElse("-") + ", trustStorePassword="
                + masked(trustStorePassword) + ", keyStore=" + keyStore.map(Path::toString).orElse("-")
                + ", keyStorePassword=" + masked(keyStorePassword) + "]";
    }

    private static String masked(Optional<String> secret) {
        return secret.isPresent() ? Redaction.MASK : "-";
    }
}
