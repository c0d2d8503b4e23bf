package dev.warden.quota.redis;

import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;
import dev.warden.redis.internal.RedisAccess;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The quota engine's settings ({@code warden.quota.*}), each declared once; {@link QuotaConfig#from} reads them. */
public final class QuotaSettings {

    public static final String PREFIX = "warden.quota.";

    public static final Setting<String> ENDPOINT = Setting.text(PREFIX + "endpoint", null,
                    "the engine's Redis: `redis://host:port[/db]`, `redis-sentinel://s1:26379,s2:26379/<master name>` or"
                            + " `redis-cluster://n1:6379,n2:6379` (the Redis lock backend's forms)")
            .required("e.g. redis://127.0.0.1:6379, redis-sentinel://s1,s2/mymaster or redis-cluster://n1,n2");
    public static final Setting<String> NAMESPACE = Setting.text(PREFIX + "namespace", "",
                    "prefix of every key (`<namespace>:quota:...`): tenants sharing one Redis never see each other's data;"
                            + " letters, digits, `. _ -` in `:`-separated words, at most 64")
            .check(ns -> QuotaConfig.namespaceProblem(ns) == null, QuotaConfig::namespaceProblem);
    public static final Setting<Integer> PARTITIONS = Setting.whole(PREFIX + "partitions", 16, 1, 16384,
            "how many journal partitions (and Cluster slots) accounts spread over; fixed for the life of the data");
    public static final Setting<Duration> IDEMPOTENCY_RETENTION = atLeastAMillisecond(Setting.duration(
            PREFIX + "idempotency-retention", Duration.ofHours(24), "how long a request id is remembered"));
    public static final Setting<Duration> REQUEST_TIMEOUT = atLeastAMillisecond(Setting.duration(
            PREFIX + "request-timeout", Duration.ofSeconds(5), "the deadline of every call"));
    public static final Setting<Duration> CONNECT_TIMEOUT = atLeastAMillisecond(Setting.duration(
            PREFIX + "connect-timeout", Duration.ofSeconds(5), "the deadline of connecting and loading the scripts at start"));
    public static final Setting<QuotaConfig.LockChoice> LOCK = Setting.oneOf(PREFIX + "lock", QuotaConfig.LockChoice.class,
            QuotaConfig.LockChoice.NONE, "the lock `charge` takes around an account; its settings are `warden.lock.*`");
    public static final Setting<Duration> LOCK_WAIT = atLeastAMillisecond(Setting.duration(PREFIX + "lock-wait",
            Duration.ofSeconds(10), "how long `charge` waits for the account's lock"));
    public static final Setting<QuotaConfig.LockUnavailable> LOCK_UNAVAILABLE = Setting.oneOf(PREFIX + "lock-unavailable",
            QuotaConfig.LockUnavailable.class, QuotaConfig.LockUnavailable.FAIL, "when the lock backend fails (not when"
                    + " the lock is busy): `fail` (`LOCK_FAILED`), or `proceed` without the lock, unfenced");
    public static final Setting<Boolean> COMBINE_CHARGES = Setting.flag(PREFIX + "combine-charges", false,
            "`true`: an account's concurrent `charge` calls in one engine share one hold of its lock, priced in rounds"
                    + " (each deduction applies only to the exact balance it was priced on; pricing runs on the"
                    + " combining caller's thread and runs again when the balance moved); `false`: one hold per charge");
    public static final Setting<Integer> CHARGE_THREADS = Setting.whole(PREFIX + "charge-threads", 16, 1, 1024,
            "threads that run `chargeAsync` (the lock, pricing and deduction block): at most this many charges, or"
                    + " combined accounts, at once; the rest wait in order; idle threads end after 30 s");
    public static final Setting<Boolean> ALLOW_EVICTION = Setting.flag(PREFIX + "allow-eviction", false,
            "`false`: refuse a server whose `maxmemory-policy` can evict quota keys; `true`: only warn");

    /** The table, in the order the reference lists it. */
    public static final SettingTable TABLE = table();

    private QuotaSettings() {
    }

    private static SettingTable table() {
        List<Setting<?>> settings = new ArrayList<>(List.of(ENDPOINT, NAMESPACE, PARTITIONS, IDEMPOTENCY_RETENTION,
                REQUEST_TIMEOUT, CONNECT_TIMEOUT, LOCK, LOCK_WAIT, LOCK_UNAVAILABLE, COMBINE_CHARGES,
                CHARGE_THREADS, ALLOW_EVICTION));
        settings.addAll(RedisAccess.settings(PREFIX + "redis."));
        return new SettingTable(PREFIX, "The quota engine", settings);
    }

    private static Setting<Duration> atLeastAMillisecond(Setting<Duration> s) {
        return s.check(d -> d.toMillis() >= 1, d -> "must be at least 1ms, was " + d);
    }
}
