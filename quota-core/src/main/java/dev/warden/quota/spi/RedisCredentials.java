package dev.warden.quota.spi;

import dev.warden.lock.Redaction;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The quota engine's Redis ACL user and password from settings ({@code warden.quota.redis.username}
 * and one of {@code warden.quota.redis.password}, {@code password-file}, {@code password-env}), as an
 * alternative to the endpoint's user-info, and its TLS material for {@code rediss://}
 * ({@code warden.quota.redis.tls.trust-store}, {@code tls.key-store} and their passwords, each
 * inline, {@code -file} or {@code -env}), and the sentinels' own login for {@code redis-sentinel://}
 * ({@code warden.quota.redis.sentinel.username}, {@code sentinel.password...}: Redis lets sentinels
 * and data nodes have different users). {@link #toString()} masks the passwords.
 */
public record RedisCredentials(Optional<String> username, Optional<String> password, Optional<Path> trustStore,
                               Optional<String> trustStorePassword, Optional<Path> keyStore,
                               Optional<String> keyStorePassword, Optional<String> sentinelUsername,
                               Optional<String> sentinelPassword) {

    /** No credentials from settings (the endpoint's, if any, apply). */
    public static final RedisCredentials NONE = new RedisCredentials(Optional.empty(), Optional.empty(), Optional.empty(),
            Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty(), Optional.empty());

    /** Lettuce's TLS options for the stores; null when none is set (the JVM's defaults apply). */
    SslOptions sslOptions() {
        if (trustStore.isEmpty() && keyStore.isEmpty()) {
            return null;
        }
        SslOptions.Builder b = SslOptions.builder().jdkSslProvider();
        trustStore.ifPresent(p -> b.truststore(p.toFile(), trustStorePassword.orElse(null)));
        keyStore.ifPresent(p -> b.keystore(p.toFile(), keyStorePassword.map(String::toCharArray).orElse(null)));
        return b.build();
    }

    /** Sets these credentials on {@code uri}, and the sentinel login on its sentinels' URIs, when there are any. */
    void applyTo(RedisURI uri) {
        login(uri, username, password);
        uri.getSentinels().forEach(sentinel -> login(sentinel, sentinelUsername, sentinelPassword));
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

    @Override
    public String toString() {
        return "RedisCredentials[username=" + username.orElse("-") + ", password=" + (password.isPresent() ? Redaction.MASK : "-")
                + ", trustStore=" + trustStore.map(Path::toString).orElse("-") + ", keyStore="
                + keyStore.map(Path::toString).orElse("-") + ", sentinelUsername=" + sentinelUsername.orElse("-")
                + ", sentinelPassword=" + (sentinelPassword.isPresent() ? Redaction.MASK : "-") + "]";
    }
}
