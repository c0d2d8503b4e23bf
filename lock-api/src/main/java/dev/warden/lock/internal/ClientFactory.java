package dev.warden.lock.internal;

import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** Turns settings into a client: parse, validate everything, find the one provider, connect. */
public final class ClientFactory {

    public static final String PREFIX = "warden.lock.";
    static final Set<String> COMMON = Set.of("backend", "endpoints", "namespace", "ttl", "connect-timeout",
            "request-timeout");
    /** Backends whose options may sit in one settings file beside the chosen one's. */
    static final Set<String> KNOWN_BACKENDS = Set.of("redis", "etcd", "zookeeper");
    static final Duration MIN_TTL = Duration.ofMillis(100);
    static final Duration MAX_DURATION = Duration.ofDays(365);
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final Pattern BACKEND = Pattern.compile("[a-z][a-z0-9-]{0,31}");

    private ClientFactory() {
    }

    public static LockClient create(Properties properties) {
        Map<String, Object> settings = new LinkedHashMap<>();
        if (properties == null) {
            throw new LockException(LockException.Reason.CONFIGURATION, "properties must not be null");
        }
        // entrySet, not stringPropertyNames: a Duration put into Properties must not vanish silently.
        properties.forEach((k, v) -> settings.put(String.valueOf(k), v));
        return create(settings);
    }

    public static LockClient create(URI uri) {
        return create(settingsFromUri(uri));
    }

    public static LockClient create(Map<String, ?> settings) {
        return create(settings, LockObserver.NONE);
    }

    public static LockClient create(Map<String, ?> settings, LockObserver observer) {
        Objects.requireNonNull(observer, "observer");
        Resolved resolved = resolve(settings, ServiceLoader.load(LockProvider.class, classLoader()));
        LockDriver driver = resolved.provider.open(resolved.config);
        return new DefaultLockClient(resolved.config, driver, new SafeObserver(observer));
    }

    /** The provider and validated configuration for these settings, or one exception naming every problem. */
    static Resolved resolve(Map<String, ?> settings, Iterable<LockProvider> candidates) {
        if (settings == null) {
            throw new LockException(LockException.Reason.CONFIGURATION, "settings must not be null");
        }
        List<String> problems = new ArrayList<>();
        Map<String, String> own = new TreeMap<>();
        settings.forEach((k, v) -> {
            if (k != null && k.startsWith(PREFIX)) {
                if (v == null) {
                    problems.add(k + " has no value");
                } else {
                    own.put(k.substring(PREFIX.length()), v instanceof Duration d ? d.toString() : v.toString().trim());
                }
            }
        });

        String backend = own.get("backend");
        if (backend == null || backend.isEmpty()) {
            problems.add(PREFIX + "backend is required (redis, etcd or zookeeper)");
            backend = null;
        } else if (!BACKEND.matcher(backend).matches()) {
            problems.add(PREFIX + "backend '" + backend + "' is not a backend name");
            backend = null;
        }

        List<String> endpoints = List.of();
        String rawEndpoints = own.get("endpoints");
        if (rawEndpoints == null || rawEndpoints.isBlank()) {
            problems.add(PREFIX + "endpoints is required, e.g. redis://127.0.0.1:6379");
        } else {
            endpoints = Arrays.stream(rawEndpoints.split(",")).map(String::trim).toList();
            if (endpoints.stream().anyMatch(String::isEmpty)) {
                problems.add(PREFIX + "endpoints '" + masked(rawEndpoints) + "' contains an empty entry");
            }
        }

        String namespace = own.getOrDefault("namespace", "warden");
        if (!NAMESPACE.matcher(namespace).matches()) {
            problems.add(PREFIX + "namespace '" + namespace + "' must be 1-64 of A-Z a-z 0-9 . _ -");
        }
        Duration ttl = positiveDuration(own, "ttl", Duration.ofSeconds(30), problems);
        if (ttl != null && ttl.compareTo(MIN_TTL) < 0) {
            problems.add(PREFIX + "ttl must be at least " + MIN_TTL.toMillis() + "ms, was " + own.get("ttl"));
            ttl = null;
        }
        Duration connectTimeout = positiveDuration(own, "connect-timeout", Duration.ofSeconds(5), problems);
        Duration requestTimeout = positiveDuration(own, "request-timeout", Duration.ofSeconds(5), problems);

        LockProvider provider = null;
        LockException providerProblem = null;
        if (backend != null) {
            try {
                provider = findProvider(backend, candidates, problems);
            } catch (LockException e) {
                providerProblem = e;
                problems.add(e.getMessage());
            }
        }

        Map<String, String> options = new TreeMap<>();
        for (Map.Entry<String, String> e : own.entrySet()) {
            String key = e.getKey();
            if (COMMON.contains(key)) {
                continue;
            }
            if (backend != null && key.startsWith(backend + ".")) {
                String option = key.substring(backend.length() + 1);
                if (provider != null && !provider.optionNames().contains(option)) {
                    problems.add("unknown setting " + PREFIX + key + " (the " + backend + " backend knows "
                            + (provider.optionNames().isEmpty() ? "no options" : String.join(", ", new TreeSet<>(provider.optionNames())))
                            + ")");
                } else {
                    options.put(option, e.getValue());
                }
            } else if (!KNOWN_BACKENDS.contains(key.substring(0, Math.max(0, key.indexOf('.'))))) {
                problems.add("unknown setting " + PREFIX + key);
            }
        }

        LockConfig config = null;
        if (provider != null && ttl != null) {
            Duration granularity = provider.ttlGranularity();
            if (ttl.toNanos() % granularity.toNanos() != 0) {
                problems.add(PREFIX + "ttl " + ttl + " must be a multiple of " + granularity
                        + " for the " + backend + " backend");
            }
        }
        if (problems.isEmpty()) {
            config = new LockConfig(backend, endpoints, namespace, ttl, connectTimeout, requestTimeout, options);
            problems.addAll(provider.validate(config));
        }
        if (!problems.isEmpty()) {
            LockException.Reason reason = providerProblem != null ? providerProblem.reason() : LockException.Reason.CONFIGURATION;
            throw new LockException(reason, "invalid lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return new Resolved(provider, config);
    }

    record Resolved(LockProvider provider, LockConfig config) {
    }

    private static LockProvider findProvider(String backend, Iterable<LockProvider> candidates, List<String> problems) {
        List<LockProvider> matching = new ArrayList<>();
        List<String> available = new ArrayList<>();
        var it = candidates.iterator();
        while (true) {
            LockProvider p;
            try {
                if (!it.hasNext()) {
                    break;
                }
                p = it.next();
            } catch (ServiceConfigurationError e) {
                problems.add("a lock provider could not be loaded: " + e.getMessage());
                continue;
            }
            available.add(p.backend());
            if (backend.equals(p.backend())) {
                matching.add(p);
            }
        }
        if (matching.isEmpty()) {
            throw new LockException(LockException.Reason.NO_PROVIDER, "no lock provider for backend '" + backend
                    + "' on the class path (found: " + (available.isEmpty() ? "none" : String.join(", ", available))
                    + "); add the warden lock-" + backend + " module");
        }
        if (matching.size() > 1) {
            throw new LockException(LockException.Reason.AMBIGUOUS_PROVIDER, "more than one lock provider for backend '"
                    + backend + "': " + matching.stream().map(p -> p.getClass().getName()).collect(Collectors.joining(", ")));
        }
        return matching.get(0);
    }

    private static Duration positiveDuration(Map<String, String> own, String key, Duration fallback, List<String> problems) {
        String raw = own.get(key);
        if (raw == null) {
            return fallback;
        }
        try {
            Duration d = Durations.parse(raw);
            if (d.isZero() || d.isNegative()) {
                problems.add(PREFIX + key + " must be positive, was " + raw);
                return null;
            }
            if (d.compareTo(MAX_DURATION) > 0) {
                problems.add(PREFIX + key + " must be at most " + MAX_DURATION.toDays() + " days, was " + raw);
                return null;
            }
            return d;
        } catch (IllegalArgumentException e) {
            problems.add(PREFIX + key + ": " + e.getMessage());
            return null;
        }
    }

    static Map<String, String> settingsFromUri(URI uri) {
        if (uri == null) {
            throw new LockException(LockException.Reason.CONFIGURATION, "uri must not be null");
        }
        String scheme = uri.getScheme();
        String authority = uri.getRawAuthority();
        if (scheme == null || authority == null || authority.isEmpty()) {
            throw new LockException(LockException.Reason.CONFIGURATION,
                    "invalid lock configuration: '" + masked(uri.toString())
                            + "' is not of the form backend://host:port[,host:port][?setting=value]");
        }
        String backend = scheme.toLowerCase(java.util.Locale.ROOT);
        if (backend.equals("rediss")) {
            backend = "redis";
        }
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put(PREFIX + "backend", backend);
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        String scheme0 = scheme;
        settings.put(PREFIX + "endpoints", Arrays.stream(authority.split(","))
                .map(hostPort -> scheme0 + "://" + hostPort + path)
                .collect(Collectors.joining(",")));
        String query = uri.getRawQuery();
        if (query != null && !query.isEmpty()) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
                settings.put(PREFIX + key, value);
            }
        }
        return settings;
    }

    /** Hides passwords in URIs before they reach a message or a log. */
    static String masked(String text) {
        return text.replaceAll("(://[^:/@,]*:)[^@/,]*@", "$1****@");
    }

    private static ClassLoader classLoader() {
        ClassLoader cl = Thread.currentThread().getContextClassLoader();
        return cl != null ? cl : ClientFactory.class.getClassLoader();
    }
}
