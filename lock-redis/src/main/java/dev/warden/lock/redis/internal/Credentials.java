package dev.warden.lock.redis.internal;

import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;
import io.lettuce.core.RedisURI;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The ACL user and password given as settings rather than in the endpoint:
 * {@code warden.lock.redis.username} and one of {@code warden.lock.redis.password},
 * {@code password-file} (a file holding it) or {@code password-env} (the name of an environment
 * variable holding it). Applied to every URI of the topology (for Sentinel, the data nodes'). The
 * sentinels' own login, when they require one, is {@code warden.lock.redis.sentinel.username} and
 * {@code sentinel.password} (or {@code -file}, {@code -env}): Redis lets sentinels and data nodes have
 * different users, so neither is inferred from the other. Never printed: {@link #toString()} masks
 * the password.
 */
public record Credentials(Optional<String> username, Optional<String> password) {

    public static final Set<String> OPTIONS = Set.of("username", "password", "password-file", "password-env",
            "sentinel.username", "sentinel.password", "sentinel.password-file", "sentinel.password-env");
    /** The TLS options ({@link Tls}), named here so the provider need not see that class. */
    public static final Set<String> TLS_OPTIONS = Tls.OPTIONS;
    private static final String PREFIX = "warden.lock.redis.";

    /** Every problem with the credential settings; empty when they are usable. */
    public static List<String> problems(List<String> endpoints, Map<String, String> options,
                                        Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        try {
            Credentials c = of(options, environment);
            if (c.username.isPresent() && c.password.isEmpty()) {
                problems.add(PREFIX + "username needs a password (" + PREFIX + "password, password-file or password-env)");
            }
            if (c.password.isPresent() && endpoints.stream().anyMatch(e -> !Redaction.redact(e).equals(e))) {
                problems.add("the endpoint carries credentials and " + PREFIX + "password is set too: keep one");
            }
            Credentials sentinel = sentinelOf(options, environment);
            if (sentinel.username.isPresent() && sentinel.password.isEmpty()) {
                problems.add(PREFIX + "sentinel.username needs a password (" + PREFIX
                        + "sentinel.password, sentinel.password-file or sentinel.password-env)");
            }
            // The setting may arrive split at its commas; the scheme is the first entry's.
            String first = endpoints.isEmpty() ? "" : endpoints.get(0).trim();
            boolean sentinelEndpoints = first.startsWith("redis-sentinel:") || first.startsWith("rediss-sentinel:");
            if ((sentinel.username.isPresent() || sentinel.password.isPresent()) && !sentinelEndpoints) {
                problems.add(PREFIX + "sentinel.* settings apply to redis-sentinel:// endpoints only");
            }
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        return problems;
    }

    /** Every problem with the TLS settings ({@link Tls}); empty when they are usable. */
    public static List<String> tlsProblems(List<String> endpoints, Map<String, String> options,
                                           Function<String, String> environment) {
        return Tls.problems(endpoints, options, environment);
    }

    /** The data nodes' credentials the options give (none when unset). */
    static Credentials of(Map<String, String> options, Function<String, String> environment) {
        return of(options, environment, "");
    }

    /** The sentinels' credentials ({@code sentinel.username}, {@code sentinel.password...}; none when unset). */
    static Credentials sentinelOf(Map<String, String> options, Function<String, String> environment) {
        return of(options, environment, "sentinel.");
    }

    private static Credentials of(Map<String, String> options, Function<String, String> environment, String scope) {
        Map<String, String> prefixed = new java.util.HashMap<>();
        options.forEach((k, v) -> prefixed.put(PREFIX + k, v));
        Optional<String> password = WardenSettings.secret(prefixed, PREFIX + scope + "password", environment);
        Optional<String> username = Optional.ofNullable(options.get(scope + "username")).map(String::trim).filter(u -> !u.isEmpty());
        return new Credentials(username, password);
    }

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
        return "Credentials[username=" + username.orElse("-") + ", password=" + (password.isPresent() ? Redaction.MASK : "-") + "]";
    }
}
