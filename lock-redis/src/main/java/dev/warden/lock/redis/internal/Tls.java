package dev.warden.lock.redis.internal;

import dev.warden.lock.WardenSettings;
import io.lettuce.core.SslOptions;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * TLS settings for a {@code rediss://} endpoint: {@code warden.lock.redis.tls.trust-store} (a PKCS12
 * or JKS file of the CAs to trust; the JVM's default trust when unset) and, for mutual TLS,
 * {@code tls.key-store} (the client's key and certificate chain); each store's password inline, in a
 * file or in an environment variable ({@code tls.trust-store-password[-file|-env]},
 * {@code tls.key-store-password[-file|-env]}). The server's certificate and host name are always
 * verified (Lettuce's {@code SslVerifyMode.FULL}).
 */
record Tls(Optional<Path> trustStore, Optional<String> trustStorePassword, Optional<Path> keyStore,
           Optional<String> keyStorePassword) {

    static final Set<String> OPTIONS = Set.of("tls.trust-store", "tls.trust-store-password", "tls.trust-store-password-file",
            "tls.trust-store-password-env", "tls.key-store", "tls.key-store-password", "tls.key-store-password-file",
            "tls.key-store-password-env");
    private static final String PREFIX = "warden.lock.redis.";

    static Tls of(Map<String, String> options, Function<String, String> environment) {
        Map<String, String> prefixed = new HashMap<>();
        options.forEach((k, v) -> prefixed.put(PREFIX + k, v));
        return new Tls(Optional.ofNullable(options.get("tls.trust-store")).map(String::trim).map(Path::of),
                WardenSettings.secret(prefixed, PREFIX + "tls.trust-store-password", environment),
                Optional.ofNullable(options.get("tls.key-store")).map(String::trim).map(Path::of),
                WardenSettings.secret(prefixed, PREFIX + "tls.key-store-password", environment));
    }

    static List<String> problems(List<String> endpoints, Map<String, String> options, Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        try {
            Tls tls = of(options, environment);
            boolean any = options.keySet().stream().anyMatch(OPTIONS::contains);
            if (any && endpoints.stream().noneMatch(e -> e.trim().toLowerCase(java.util.Locale.ROOT).startsWith("rediss"))) {
                problems.add(PREFIX + "tls.* is set but the endpoint is not rediss://, rediss-sentinel:// or rediss-cluster://");
            }
            tls.trustStore.filter(p -> !Files.isReadable(p))
                    .ifPresent(p -> problems.add(PREFIX + "tls.trust-store '" + p + "' is not a readable file"));
            tls.keyStore.filter(p -> !Files.isReadable(p))
                    .ifPresent(p -> problems.add(PREFIX + "tls.key-store '" + p + "' is not a readable file"));
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        return problems;
    }

    /** Lettuce's options for these settings; null when nothing is set (the JVM's defaults apply). */
    SslOptions sslOptions() {
        if (trustStore.isEmpty() && keyStore.isEmpty()) {
            return null;
        }
        SslOptions.Builder b = SslOptions.builder().jdkSslProvider();
        trustStore.ifPresent(p -> b.truststore(p.toFile(), trustStorePassword.orElse(null)));
        keyStore.ifPresent(p -> b.keystore(p.toFile(), keyStorePassword.map(String::toCharArray).orElse(null)));
        return b.build();
    }

    @Override
    public String toString() {
        return "Tls[trustStore=" + trustStore.map(Path::toString).orElse("-") + ", keyStore="
                + keyStore.map(Path::toString).orElse("-") + "]";
    }
}
