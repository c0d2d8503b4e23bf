package dev.warden.lock.settings;

import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The settings every lock client reads ({@code warden.lock.*}), whatever its backend. Each backend's own
 * options ({@code warden.lock.<backend>.*}) are its provider's
 * {@link dev.warden.lock.spi.LockProvider#settings()}.
 */
public final class LockSettings {

    /** The longest duration any setting takes. */
    public static final Duration MAX_DURATION = Duration.ofDays(365);
    /** The shortest lease. */
    public static final Duration MIN_TTL = Duration.ofMillis(100);

    public static final Setting<String> BACKEND = Setting.text("warden.lock.backend", null,
                    "`redis`, `etcd`, `zookeeper`, `jdbc` (PostgreSQL), or `memory` (tests and one JVM only); its module must be on"
                            + " the class path")
            .matching(Pattern.compile("[a-z][a-z0-9-]{0,31}"), "is not a backend name")
            .required("one of redis, etcd, zookeeper, jdbc or memory");
    public static final Setting<List<String>> ENDPOINTS = Setting.list("warden.lock.endpoints",
                    "comma-separated URIs: `redis://h:6379`, `redis-sentinel://s1,s2/<master>`, `redis-cluster://n1,n2`,"
                            + " `etcd://h1:2379,etcd://h2:2379`, `zookeeper://h1:2181,zookeeper://h2:2181`,"
                            + " `jdbc:postgresql://h:5432/db` (one), `memory://name`")
            .required("e.g. redis://127.0.0.1:6379");
    public static final Setting<String> NAMESPACE = Setting.text("warden.lock.namespace", "warden",
                    "prefix of every key or path: clients of different namespaces never see each other's locks")
            .matching(Pattern.compile("[A-Za-z0-9._-]{1,64}"), "must be 1-64 of A-Z a-z 0-9 . _ -");
    public static final Setting<Duration> TTL = positive(Setting.duration("warden.lock.ttl", Duration.ofSeconds(30),
            "lease time to live, renewed every third of it while held (etcd: whole seconds)"))
            .check(d -> d.compareTo(MIN_TTL) >= 0, d -> "must be at least " + MIN_TTL.toMillis() + "ms, was " + d.toMillis() + "ms");
    public static final Setting<Duration> CONNECT_TIMEOUT = positive(Setting.duration("warden.lock.connect-timeout",
            Duration.ofSeconds(5), "how long connecting may take at start"));
    public static final Setting<Duration> REQUEST_TIMEOUT = positive(Setting.duration("warden.lock.request-timeout",
            Duration.ofSeconds(5), "deadline of every server call"));
    public static final Setting<Duration> OUTAGE_TOLERANCE = atMostAYear(Setting.duration("warden.lock.outage-tolerance",
            Duration.ofSeconds(30), "how long an acquisition keeps retrying while the server cannot be reached before it"
                    + " fails with `UNAVAILABLE`; `0s` fails at the first failure"));
    public static final Setting<Duration> MAX_HOLD_TIME = positive(Setting.duration("warden.lock.max-hold-time", null,
            "the longest any lease of the client is held (per lock: `withMaxHoldTime`)"));

    public static final Setting<Duration> LEASE_CACHE = atMostAYear(Setting.duration("warden.lock.lease-cache",
            Duration.ZERO, "lease caching: how long a released lock stays held on the server for this"
                    + " client's next acquisition of it, which then takes it without a round trip and with a new, higher"
                    + " fencing token; a contender of another client ends it at once. A kept lock is lent again only within a third"
                    + " of the TTL of its last renewal. Redis reserves the lent tokens with each grant; etcd, ZooKeeper, jdbc and"
                    + " memory at the first release of each grant (one more round trip). `0s` (the default) releases at once"))
            .check(d -> !d.isNegative(), d -> "must not be negative, was " + d);

    public static final Setting<Integer> FENCING_EPOCH = Setting.whole("warden.lock.fencing-epoch", 0, 0,
            dev.warden.lock.FencingEpoch.MAX_EPOCH, "the high bits of every fencing token (`epoch << 53 | backend token`):"
                    + " raise it by one when the deployment moves to another backend, so every new token exceeds every"
                    + " old one; never lower it (a client below the epoch its namespace already used on the backend does"
                    + " not open)");

    public static final Setting<String> MIGRATE_FROM = Setting.text("warden.lock.migrate-from", null,
                    "the middle step of a switch between backends: the backend being left; every acquisition takes the lock"
                    + " there first, then on `warden.lock.backend`, so this step excludes instances of the steps before and"
                    + " after it (its options stay under `warden.lock.<that backend>.*`)")
            .matching(Pattern.compile("[a-z][a-z0-9-]{0,31}"), "is not a backend name");
    public static final Setting<List<String>> MIGRATE_FROM_ENDPOINTS = Setting.list("warden.lock.migrate-from-endpoints",
            "the endpoints of the backend being left (with `warden.lock.migrate-from`), as `warden.lock.endpoints`");

    /** The table, in the order the reference lists it. */
    public static final SettingTable TABLE = new SettingTable("warden.lock.", "Locks: every backend",
            List.of(BACKEND, ENDPOINTS, NAMESPACE, TTL, CONNECT_TIMEOUT, REQUEST_TIMEOUT, OUTAGE_TOLERANCE, MAX_HOLD_TIME,
                    LEASE_CACHE, FENCING_EPOCH, MIGRATE_FROM, MIGRATE_FROM_ENDPOINTS));

    private LockSettings() {
    }

    private static Setting<Duration> positive(Setting<Duration> s) {
        return atMostAYear(s.check(d -> !d.isNegative() && !d.isZero(), d -> "must be positive, was " + d));
    }

    private static Setting<Duration> atMostAYear(Setting<Duration> s) {
        return s.check(d -> d.compareTo(MAX_DURATION) <= 0, d -> "must be at most " + MAX_DURATION.toDays() + " days, was " + d);
    }
}
