package dev.warden.quota.spi;

import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;
import dev.warden.quota.QuotaException;
import dev.warden.redis.internal.RedisAccess;
import dev.warden.redis.internal.RedisEndpoint;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The quota engine's settings ({@code warden.quota.*}), checked up front; every problem is reported
 * in one exception. Shared by the engine and the ledger, which connect to the same Redis.
 */
public record QuotaConfig(String endpoint, String namespace, int partitions, Duration idempotencyRetention,
                          Duration requestTimeout, Duration connectTimeout, LockChoice lock, Duration lockWait,
                          LockUnavailable lockUnavailable, boolean allowEviction, Map<String, Object> lockSettings,
                          RedisAccess redis) {

    public static final String PREFIX = "warden.quota.";
    private static final String LOCK_PREFIX = "warden.lock.";
    private static final Set<String> KEYS = keys();
    /** The credential and TLS settings, shared with the Redis lock when it follows the quota endpoint. */
    private static final List<String> CREDENTIALS = KEYS.stream().filter(k -> k.startsWith("redis."))
            .map(k -> k.substring("redis.".length())).sorted().toList();
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._-]+(:[A-Za-z0-9._-]+)*");
    private static final int MAX_NAMESPACE = 64;

    private static Set<String> keys() {
        Set<String> keys = new TreeSet<>(Set.of("endpoint", "namespace", "partitions", "idempotency-retention",
                "request-timeout", "connect-timeout", "lock", "lock-wait", "lock-unavailable", "allow-eviction"));
        RedisAccess.LOGIN_OPTIONS.forEach(k -> keys.add("redis." + k));
        RedisAccess.TLS_OPTIONS.forEach(k -> keys.add("redis." + k));
        return Set.copyOf(keys);
    }

    /** What {@code charge} does when its lock backend fails. */
    public enum LockUnavailable {
        /** The charge fails with LOCK_FAILED. */
        FAIL,
        /** The charge runs without the lock, unfenced; the listener is told. */
        PROCEED
    }

    /** Every setting this reads, by its full name ({@code warden.quota.endpoint}, ...), in order. */
    public static SortedSet<String> settingNames() {
        return Collections.unmodifiableSortedSet(KEYS.stream().map(k -> PREFIX + k)
                .collect(Collectors.toCollection(TreeSet::new)));
    }

    /** Which lock {@code charge} takes. */
    public enum LockChoice {
        NONE, REDIS, ETCD, ZOOKEEPER, MEMORY;

        public String wireName() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The same engine with no lock around charges and no {@code warden.lock.*} settings: what the ledger
     * compensates and bootstraps with (it writes under request ids, never prices a charge).
     */
    public QuotaConfig withoutLock() {
        return new QuotaConfig(endpoint, namespace, partitions, idempotencyRetention, requestTimeout, connectTimeout,
                LockChoice.NONE, lockWait, lockUnavailable, allowEviction, Map.of(), redis);
    }

    public static QuotaConfig from(Properties properties) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (String name : properties.stringPropertyNames()) {
            map.put(name, properties.getProperty(name));
        }
        return from(map);
    }

    public static QuotaConfig from(Map<String, ?> settings) {
        List<String> problems = new ArrayList<>();
        Map<String, String> own = new LinkedHashMap<>();
        Map<String, Object> lockSettings = new LinkedHashMap<>();
        Set<String> unknown = new TreeSet<>();
        settings.forEach((key, value) -> {
            if (key == null || value == null) {
                return;
            }
            if (key.startsWith(PREFIX)) {
                String name = key.substring(PREFIX.length());
                if (KEYS.contains(name)) {
                    own.put(name, value instanceof Duration d ? d.toString() : value.toString().trim());
                } else {
                    unknown.add(key);
                }
            } else if (key.startsWith(LOCK_PREFIX)) {
                lockSettings.put(key, value);
            }
        });
        unknown.forEach(k -> problems.add("unknown setting " + k + " (known: " + new TreeSet<>(KEYS) + ")"));

        String endpoint = own.get("endpoint");
        if (endpoint == null || endpoint.isEmpty()) {
            problems.add(PREFIX + "endpoint is required, e.g. redis://127.0.0.1:6379, redis-sentinel://s1,s2/mymaster or"
                    + " redis-cluster://n1,n2");
        } else {
            try {
                RedisEndpoint.parse(endpoint);
            } catch (IllegalArgumentException e) {
                problems.add(PREFIX + "endpoint: " + e.getMessage());
            }
        }
        RedisAccess credentials = RedisAccess.none(PREFIX + "redis.");
        Map<String, String> access = new LinkedHashMap<>();
        own.forEach((k, v) -> {
            if (k.startsWith("redis.")) {
                access.put(k.substring("redis.".length()), v);
            }
        });
        List<String> endpoints = endpoint == null ? List.of() : List.of(endpoint);
        List<String> accessProblems = RedisAccess.problems(PREFIX + "redis.", endpoints, access, System::getenv);
        if (accessProblems.isEmpty()) {
            credentials = RedisAccess.read(PREFIX + "redis.", access, System::getenv);
        }
        problems.addAll(accessProblems);
        String namespace = own.getOrDefault("namespace", "");
        String nsProblem = namespaceProblem(namespace);
        if (nsProblem != null) {
            problems.add(PREFIX + nsProblem);
        }
        boolean allowEviction = false;
        if (own.containsKey("allow-eviction")) {
            String v = own.get("allow-eviction").toLowerCase(Locale.ROOT);
            if (v.equals("true") || v.equals("false")) {
                allowEviction = v.equals("true");
            } else {
                problems.add(PREFIX + "allow-eviction '" + own.get("allow-eviction") + "' is not true or false");
            }
        }
        int partitions = 16;
        if (own.containsKey("partitions")) {
            try {
                partitions = Integer.parseInt(own.get("partitions"));
                if (partitions < 1 || partitions > 16384) {
                    problems.add(PREFIX + "partitions must be 1..16384, was " + partitions);
                }
            } catch (NumberFormatException e) {
                problems.add(PREFIX + "partitions '" + own.get("partitions") + "' is not a whole number");
            }
        }
        Duration retention = duration(own, "idempotency-retention", Duration.ofHours(24), problems);
        Duration requestTimeout = duration(own, "request-timeout", Duration.ofSeconds(5), problems);
        Duration connectTimeout = duration(own, "connect-timeout", Duration.ofSeconds(5), problems);
        Duration lockWait = duration(own, "lock-wait", Duration.ofSeconds(10), problems);
        LockChoice lock = LockChoice.NONE;
        if (own.containsKey("lock")) {
            try {
                lock = LockChoice.valueOf(own.get("lock").toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                problems.add(PREFIX + "lock '" + own.get("lock") + "' is not one of none, redis, etcd, zookeeper, memory");
            }
        }
        LockUnavailable lockUnavailable = LockUnavailable.FAIL;
        if (own.containsKey("lock-unavailable")) {
            try {
                lockUnavailable = LockUnavailable.valueOf(own.get("lock-unavailable").toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                problems.add(PREFIX + "lock-unavailable '" + own.get("lock-unavailable") + "' is not fail or proceed");
            }
        }
        if (lock != LockChoice.NONE) {
            Object backend = lockSettings.get(LOCK_PREFIX + "backend");
            if (backend == null) {
                lockSettings.put(LOCK_PREFIX + "backend", lock.wireName());
            } else if (!backend.toString().trim().equalsIgnoreCase(lock.wireName())) {
                problems.add(LOCK_PREFIX + "backend '" + backend + "' contradicts " + PREFIX + "lock '" + lock.wireName() + "'");
            }
            if (!lockSettings.containsKey(LOCK_PREFIX + "endpoints")) {
                if (lock == LockChoice.REDIS && endpoint != null) {
                    lockSettings.put(LOCK_PREFIX + "endpoints", endpoint);
                    // The same Redis, so the same user, unless the lock names its own.
                    if (CREDENTIALS.stream().noneMatch(k -> lockSettings.containsKey(LOCK_PREFIX + "redis." + k))) {
                        CREDENTIALS.stream().filter(k -> own.containsKey("redis." + k))
                                .forEach(k -> lockSettings.put(LOCK_PREFIX + "redis." + k, own.get("redis." + k)));
                    }
                } else if (lock == LockChoice.MEMORY) {
                    lockSettings.put(LOCK_PREFIX + "endpoints", "memory://quota");
                } else if (lock != LockChoice.REDIS) {
                    problems.add(LOCK_PREFIX + "endpoints is required for the " + lock.wireName() + " lock");
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new QuotaException(QuotaException.Reason.CONFIGURATION,
                    "invalid quota configuration: " + String.join("; ", problems));
        }
        return new QuotaConfig(endpoint, namespace, partitions, retention, requestTimeout, connectTimeout, lock, lockWait,
                lockUnavailable, allowEviction, Map.copyOf(lockSettings), credentials);
    }

    /** The settings without secrets: the endpoint redacted, secret lock settings masked ({@link Redaction}). */
    @Override
    public String toString() {
        return "QuotaConfig[endpoint=" + Redaction.redact(endpoint) + ", namespace=" + namespace + ", partitions="
                + partitions + ", idempotencyRetention=" + idempotencyRetention + ", requestTimeout=" + requestTimeout
                + ", connectTimeout=" + connectTimeout + ", lock=" + lock + ", lockWait=" + lockWait + ", lockUnavailable="
                + lockUnavailable + ", allowEviction=" + allowEviction + ", lockSettings=" + Redaction.settings(lockSettings)
                + ", redis=" + redis + "]";
    }

    /** The key layout these settings describe. */
    public KeyLayout layout() {
        return new KeyLayout(namespace, partitions);
    }

    /**
     * Null when {@code namespace} may prefix the quota keys (empty, or 1..64 letters, digits,
     * {@code . _ -} in {@code :}-separated words); else what is wrong. Braces would forge a Cluster hash
     * tag and glob characters would widen the reconciler's scan, so neither is allowed.
     */
    static String namespaceProblem(String namespace) {
        if (namespace == null) {
            return "namespace must not be null";
        }
        if (namespace.isEmpty()) {
            return null;
        }
        if (namespace.length() > MAX_NAMESPACE || !NAMESPACE.matcher(namespace).matches()) {
            return "namespace '" + (namespace.length() > MAX_NAMESPACE ? namespace.substring(0, MAX_NAMESPACE) + "..." : namespace)
                    + "' is invalid: 1.." + MAX_NAMESPACE + " letters, digits, '.', '_' or '-', in words separated by ':'";
        }
        return null;
    }

    private static Duration duration(Map<String, String> own, String name, Duration fallback, List<String> problems) {
        String text = own.get(name);
        if (text == null) {
            return fallback;
        }
        Duration d = parseDuration(text);
        if (d == null) {
            problems.add(PREFIX + name + " '" + text + "' is not a duration (write " + WardenSettings.DURATION_FORMS + ")");
            return fallback;
        }
        if (d.isNegative() || d.isZero() || d.toMillis() < 1) {
            problems.add(PREFIX + name + " must be at least 1ms, was " + text);
            return fallback;
        }
        return d;
    }

    /** The one grammar of durations ({@link WardenSettings#duration}); null when the text is not one. */
    public static Duration parseDuration(String text) {
        try {
            return WardenSettings.duration(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

}
