package dev.warden.quota.redis;

import dev.warden.lock.Redaction;
import dev.warden.lock.WardenSettings;
import dev.warden.lock.settings.SettingTable;
import dev.warden.quota.QuotaException;
import dev.warden.redis.internal.RedisAccess;
import dev.warden.redis.internal.RedisEndpoint;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SortedSet;
import java.util.regex.Pattern;

/**
 * The quota engine's settings ({@code warden.quota.*}), checked up front; every problem is reported
 * in one exception. Shared by the engine and the ledger, which connect to the same Redis.
 */
public record QuotaConfig(String endpoint, String namespace, int partitions, Duration idempotencyRetention,
                          Duration requestTimeout, Duration connectTimeout, LockChoice lock, Duration lockWait,
                          LockUnavailable lockUnavailable, boolean combineCharges, int chargeThreads, boolean allowEviction,
                          Map<String, Object> lockSettings, RedisAccess redis) {

    public static final String PREFIX = QuotaSettings.PREFIX;
    private static final String LOCK_PREFIX = "warden.lock.";
    /** The credential and TLS settings, shared with the Redis lock when it follows the quota endpoint. */
    private static final List<String> CREDENTIALS = QuotaSettings.TABLE.names().stream().filter(k -> k.startsWith("redis."))
            .map(k -> k.substring("redis.".length())).sorted().toList();
    private static final Pattern NAMESPACE = Pattern.compile("[A-Za-z0-9._-]+(:[A-Za-z0-9._-]+)*");
    private static final int MAX_NAMESPACE = 64;

    /** What {@code charge} does when its lock backend fails. */
    public enum LockUnavailable {
        /** The charge fails with LOCK_FAILED. */
        FAIL,
        /** The charge runs without the lock, unfenced; the listener is told. */
        PROCEED
    }

    /** Every setting this reads, by its full name ({@code warden.quota.endpoint}, ...), in order. */
    public static SortedSet<String> settingNames() {
        return QuotaSettings.TABLE.keys();
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
                LockChoice.NONE, lockWait, lockUnavailable, combineCharges, chargeThreads, allowEviction, Map.of(), redis);
    }

    public static QuotaConfig from(Properties properties) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (String name : properties.stringPropertyNames()) {
            map.put(name, properties.getProperty(name));
        }
        return from(map);
    }

    public static QuotaConfig from(Map<String, ?> settings) {
        SettingTable.Values read = QuotaSettings.TABLE.read(settings, System::getenv);
        // A set: a secret given twice is reported by the table and by the access check in the same words.
        Set<String> problems = new LinkedHashSet<>(read.problems());
        read.others().keySet().forEach(k -> problems.add("unknown setting " + PREFIX + k + " (known: "
                + QuotaSettings.TABLE.names() + ")"));
        Map<String, Object> lockSettings = new LinkedHashMap<>();
        settings.forEach((key, value) -> {
            if (key != null && value != null && key.startsWith(LOCK_PREFIX)) {
                lockSettings.put(key, value);
            }
        });

        String endpoint = read.get(QuotaSettings.ENDPOINT);
        if (endpoint != null) {
            try {
                RedisEndpoint.parse(endpoint);
            } catch (IllegalArgumentException e) {
                problems.add(PREFIX + "endpoint: " + e.getMessage());
            }
        }
        Map<String, String> own = new LinkedHashMap<>();
        settings.forEach((key, value) -> {
            if (key != null && value != null && key.startsWith(PREFIX + "redis.")) {
                own.put(key.substring(PREFIX.length()), value.toString().trim());
            }
        });
        RedisAccess credentials = RedisAccess.none(PREFIX + "redis.");
        Map<String, String> access = new LinkedHashMap<>();
        own.forEach((k, v) -> access.put(k.substring("redis.".length()), v));
        List<String> endpoints = endpoint == null ? List.of() : List.of(endpoint);
        List<String> accessProblems = RedisAccess.problems(PREFIX + "redis.", endpoints, access, System::getenv);
        if (accessProblems.isEmpty()) {
            credentials = RedisAccess.read(PREFIX + "redis.", access, System::getenv);
        }
        problems.addAll(accessProblems);
        String namespace = read.find(QuotaSettings.NAMESPACE).orElse("");
        boolean allowEviction = read.get(QuotaSettings.ALLOW_EVICTION);
        int partitions = read.find(QuotaSettings.PARTITIONS).orElse(16);
        Duration retention = read.find(QuotaSettings.IDEMPOTENCY_RETENTION).orElse(QuotaSettings.IDEMPOTENCY_RETENTION.defaultValue());
        Duration requestTimeout = read.find(QuotaSettings.REQUEST_TIMEOUT).orElse(QuotaSettings.REQUEST_TIMEOUT.defaultValue());
        Duration connectTimeout = read.find(QuotaSettings.CONNECT_TIMEOUT).orElse(QuotaSettings.CONNECT_TIMEOUT.defaultValue());
        Duration lockWait = read.find(QuotaSettings.LOCK_WAIT).orElse(QuotaSettings.LOCK_WAIT.defaultValue());
        LockChoice lock = read.find(QuotaSettings.LOCK).orElse(LockChoice.NONE);
        LockUnavailable lockUnavailable = read.find(QuotaSettings.LOCK_UNAVAILABLE).orElse(LockUnavailable.FAIL);
        boolean combineCharges = read.get(QuotaSettings.COMBINE_CHARGES);
        int chargeThreads = read.find(QuotaSettings.CHARGE_THREADS).orElse(QuotaSettings.CHARGE_THREADS.defaultValue());
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
                lockUnavailable, combineCharges, chargeThreads, allowEviction, Map.copyOf(lockSettings), credentials);
    }

    /** The settings without secrets: the endpoint redacted, secret lock settings masked ({@link Redaction}). */
    @Override
    public String toString() {
        return "QuotaConfig[endpoint=" + Redaction.redact(endpoint) + ", namespace=" + namespace + ", partitions="
                + partitions + ", idempotencyRetention=" + idempotencyRetention + ", requestTimeout=" + requestTimeout
                + ", connectTimeout=" + connectTimeout + ", lock=" + lock + ", lockWait=" + lockWait + ", lockUnavailable="
                + lockUnavailable + ", combineCharges=" + combineCharges + ", chargeThreads=" + chargeThreads + ", allowEviction=" + allowEviction + ", lockSettings=" + Redaction.settings(lockSettings)
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

    /** The one grammar of durations ({@link WardenSettings#duration}); null when the text is not one. */
    public static Duration parseDuration(String text) {
        try {
            return WardenSettings.duration(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

}
