package dev.warden.lock.etcd.internal;

import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * The etcd user and password: {@code warden.lock.etcd.username} and one of
 * {@code warden.lock.etcd.password}, {@code password-file} (a file holding it) or
 * {@code password-env} (the name of an environment variable holding it). With them the driver
 * authenticates (etcd's {@code Auth.Authenticate}) and sends the token on every call. Never
 * printed: {@link #toString()} masks the password.
 */
public record Credentials(Optional<String> username, Optional<String> password) {

    public static final Set<String> OPTIONS = Set.of("username", "password", "password-file", "password-env");
    /** The TLS options ({@link Tls}), named here so the provider need not see that class. */
    public static final Set<String> TLS_OPTIONS = Tls.OPTIONS;
    static final String PREFIX = "warden.lock.etcd.";
    static final Credentials NONE = new Credentials(Optional.empty(), Optional.empty());

    /** Every problem with the credential settings; empty when they are usable. */
    public static List<String> problems(Map<String, String> options, Function<String, String> environment) {
        List<String> problems = new ArrayList<>();
        try {
            Credentials c = of(options, environment);
            if (c.username.isPresent() && c.password.isEmpty()) {
                problems.add(PREFIX + "username needs a password (" + PREFIX + "password, password-file or password-env)");
            }
            if (c.password.isPresent() && c.username.isEmpty()) {
                problems.add(PREFIX + "password needs " + PREFIX + "username: etcd authenticates a named user");
            }
        } catch (IllegalArgumentException e) {
            problems.add(Redaction.redact(e.getMessage()));
        }
        return problems;
    }

    /** Every problem with the TLS settings ({@link Tls}); empty when they are usable. */
    public static List<String> tlsProblems(List<String> endpoints, Map<String, String> options,
                                           Function<String, String> environment) {
        return Tls.problems(endpoints, options, environment);
    }

    /** The credentials the options give (none when unset). */
    static Credentials of(Map<String, String> options, Function<String, String> environment) {
        Map<String, String> prefixed = new HashMap<>();
        options.forEach((k, v) -> prefixed.put(PREFIX + k, v));
        Optional<String> password = WardenSettings.secret(prefixed, PREFIX + "password", environment);
        Optional<String> username = Optional.ofNullable(options.get("username")).map(String::trim).filter(u -> !u.isEmpty());
        return new Credentials(username, password);
    }

    /** Whether the driver authenticates. */
    boolean present() {
        return username.isPresent() && password.isPresent();
    }

    @Override
    public String toString() {
        return "Credentials[username=" + username.orElse("-") + ", password=" + (password.isPresent() ? Redaction.MASK : "-") + "]";
    }
}
