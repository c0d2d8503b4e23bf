package dev.warden.lock.internal.config;

import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.settings.LockSettings;
import dev.warden.lock.settings.SettingTable;
import dev.warden.lock.spi.LockProvider;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Reads settings: parses and validates everything ({@link LockSettings#TABLE}, then the backend's options), and
 * finds the one provider, before anything connects.
 */
public final class Settings {

    public static final String PREFIX = "warden.lock.";
    /** Backends whose options may sit in one settings file beside the chosen one's. */
    static final Set<String> KNOWN_BACKENDS = Set.of("redis", "etcd", "zookeeper", "memory");

    private Settings() {
    }

    /**
     * The provider and validated settings, and in the middle step of a switch between backends the
     * backend being left.
     */
    public record Resolved(LockProvider provider, ClientSettings settings, Optional<Leaving> leaving) {

        public Resolved(LockProvider provider, ClientSettings settings) {
            this(provider, settings, Optional.empty());
        }
    }

    /** The backend being left ({@code warden.lock.migrate-from}) and its settings. */
    public record Leaving(LockProvider provider, LockConfig config) {
    }

    /**
     * The provider and validated settings for {@code settings}, or one exception naming every
     * problem (reason {@code CONFIGURATION}, or {@code NO_PROVIDER} / {@code AMBIGUOUS_PROVIDER}).
     */
    public static Resolved resolve(Map<String, ?> settings, Iterable<LockProvider> candidates) {
        if (settings == null) {
            throw new LockException(LockException.Reason.CONFIGURATION, "settings must not be null");
        }
        SettingTable.Values read = LockSettings.TABLE.read(settings, System::getenv);
        List<String> problems = new ArrayList<>(read.problems());
        String backend = read.get(LockSettings.BACKEND);
        List<String> endpoints = read.find(LockSettings.ENDPOINTS).orElse(List.of());
        String namespace = read.get(LockSettings.NAMESPACE);
        Duration ttl = read.get(LockSettings.TTL);
        Duration connectTimeout = read.get(LockSettings.CONNECT_TIMEOUT);
        Duration requestTimeout = read.get(LockSettings.REQUEST_TIMEOUT);
        Duration outageTolerance = read.get(LockSettings.OUTAGE_TOLERANCE);
        Duration maxHoldTime = read.get(LockSettings.MAX_HOLD_TIME);
        Integer fencingEpoch = read.get(LockSettings.FENCING_EPOCH);
        Duration leaseCache = read.get(LockSettings.LEASE_CACHE);
        String fromBackend = read.find(LockSettings.MIGRATE_FROM).orElse(null);
        List<String> fromEndpoints = read.find(LockSettings.MIGRATE_FROM_ENDPOINTS).orElse(null);

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

        LockProvider fromProvider = null;
        if (fromBackend == null && fromEndpoints != null) {
            problems.add(LockSettings.MIGRATE_FROM_ENDPOINTS.key() + " is set without " + LockSettings.MIGRATE_FROM.key());
        }
        if (fromBackend != null) {
            if (fromBackend.equals(backend)) {
                problems.add(LockSettings.MIGRATE_FROM.key() + " names " + backend + ", the backend the client moves to:"
                        + " a migration is between two backends (one backend's options cannot describe two deployments)");
            } else {
                if (fromEndpoints == null) {
                    problems.add(LockSettings.MIGRATE_FROM_ENDPOINTS.key() + " is required with " + LockSettings.MIGRATE_FROM.key()
                            + " (the endpoints of the " + fromBackend + " backend being left)");
                }
                try {
                    fromProvider = findProvider(fromBackend, candidates, problems);
                } catch (LockException e) {
                    if (providerProblem == null) {
                        providerProblem = e;
                    }
                    problems.add(e.getMessage());
                }
            }
        }

        Map<String, String> options = options(read.others(), backend, provider, fromBackend, problems, true);
        Map<String, String> fromOptions = fromProvider == null ? Map.of()
                : options(read.others(), fromBackend, fromProvider, backend, problems, false);
        if (leaseCache != null && !leaseCache.isZero() && fromBackend != null) {
            problems.add(LockSettings.LEASE_CACHE.key() + " cannot be used with " + LockSettings.MIGRATE_FROM.key()
                    + ": a migrating lease lives on two backends");
        }
        checkGranularity(provider, backend, ttl, problems);
        checkGranularity(fromProvider, fromBackend, ttl, problems);
        LockConfig config = null;
        Optional<Leaving> leaving = Optional.empty();
        if (problems.isEmpty()) {
            config = new LockConfig(backend, endpoints, namespace, ttl, connectTimeout, requestTimeout, options);
            problems.addAll(provider.validate(config));
            if (fromProvider != null) {
                LockConfig fromConfig = new LockConfig(fromBackend, fromEndpoints, namespace, ttl, connectTimeout,
                        requestTimeout, fromOptions);
                fromProvider.validate(fromConfig).forEach(p -> problems.add(LockSettings.MIGRATE_FROM.key() + " " + fromBackend + ": " + p));
                leaving = Optional.of(new Leaving(fromProvider, fromConfig));
            }
        }
        if (!problems.isEmpty()) {
            LockException.Reason reason = providerProblem != null ? providerProblem.reason() : LockException.Reason.CONFIGURATION;
            throw new LockException(reason, "invalid lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return new Resolved(provider, new ClientSettings(config, outageTolerance, Optional.ofNullable(maxHoldTime),
                fencingEpoch, leaseCache), leaving);
    }

    /**
     * The options of {@code backend} among the undeclared settings, each checked against its provider; with
     * {@code strangers}, a setting of no known backend (and not of {@code alsoAllowed}) is a problem too.
     */
    private static Map<String, String> options(Map<String, String> others, String backend, LockProvider provider,
                                               String alsoAllowed, List<String> problems, boolean strangers) {
        Map<String, String> options = new TreeMap<>();
        for (Map.Entry<String, String> e : others.entrySet()) {
            String key = e.getKey();
            String area = key.substring(0, Math.max(0, key.indexOf('.')));
            if (backend != null && area.equals(backend)) {
                String option = key.substring(backend.length() + 1);
                if (provider != null && !provider.optionNames().contains(option)) {
                    problems.add("unknown setting " + PREFIX + key + " (the " + backend + " backend knows "
                            + (provider.optionNames().isEmpty() ? "no options" : String.join(", ", new TreeSet<>(provider.optionNames())))
                            + ")");
                } else {
                    options.put(option, e.getValue());
                }
            } else if (strangers && !KNOWN_BACKENDS.contains(area) && !area.equals(alsoAllowed)) {
                problems.add("unknown setting " + PREFIX + key);
            }
        }
        return options;
    }

    private static void checkGranularity(LockProvider provider, String backend, Duration ttl, List<String> problems) {
        if (provider != null && ttl != null) {
            Duration granularity = provider.ttlGranularity();
            if (ttl.toNanos() % granularity.toNanos() != 0) {
                problems.add(PREFIX + "ttl " + ttl + " must be a multiple of " + granularity
                        + " for the " + backend + " backend");
            }
        }
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

    /** Settings from {@code backend://host:port[,host:port][/path][?setting=value&...]}. */
    public static Map<String, String> fromUri(URI uri) {
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
        String backend = scheme.toLowerCase(Locale.ROOT);
        if (backend.equals("rediss")) {
            backend = "redis";
        }
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put(PREFIX + "backend", backend);
        String path = uri.getRawPath() == null ? "" : uri.getRawPath();
        settings.put(PREFIX + "endpoints", Arrays.stream(authority.split(","))
                .map(hostPort -> scheme + "://" + hostPort + path)
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

    /** Hides credentials before they reach a message or a log: {@link Redaction#redact}. */
    public static String masked(String text) {
        return Redaction.redact(text);
    }
}
