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

    /** The provider and validated settings. */
    public record Resolved(LockProvider provider, ClientSettings settings) {
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
        for (Map.Entry<String, String> e : read.others().entrySet()) {
            String key = e.getKey();
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

        if (provider != null && ttl != null) {
            Duration granularity = provider.ttlGranularity();
            if (ttl.toNanos() % granularity.toNanos() != 0) {
                problems.add(PREFIX + "ttl " + ttl + " must be a multiple of " + granularity
                        + " for the " + backend + " backend");
            }
        }
        LockConfig config = null;
        if (problems.isEmpty()) {
            config = new LockConfig(backend, endpoints, namespace, ttl, connectTimeout, requestTimeout, options);
            problems.addAll(provider.validate(config));
        }
        if (!problems.isEmpty()) {
            LockException.Reason reason = providerProblem != null ? providerProblem.reason() : LockException.Reason.CONFIGURATION;
            throw new LockException(reason, "invalid lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return new Resolved(provider, new ClientSettings(config, outageTolerance, Optional.ofNullable(maxHoldTime),
                fencingEpoch));
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
