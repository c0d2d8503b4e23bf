package dev.warden.quota.spi;

import dev.warden.lock.Redaction;
import io.lettuce.core.RedisURI;

import java.util.Optional;

/**
 * The quota engine's Redis ACL user and password from settings ({@code warden.quota.redis.username}
 * and one of {@code warden.quota.redis.password}, {@code password-file}, {@code password-env}), as an
 * alternative to the endpoint's user-info. {@link #toString()} masks the password.
 */
public record RedisCredentials(Optional<String> username, Optional<String> password) {

    /** No credentials from settings (the endpoint's, if any, apply). */
    public static final RedisCredentials NONE = new RedisCredentials(Optional.empty(), Optional.empty());

    /** Sets these credentials on {@code uri}, when there are any. */
    void applyTo(RedisURI uri) {
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
        return "RedisCredentials[username=" + username.orElse("-") + ", password=" + (password.isPresent() ? Redaction.MASK : "-") + "]";
    }
}
