package dev.warden.lock.redis;

import dev.warden.lock.LockException;
import dev.warden.lock.redis.internal.AddressMap;
import dev.warden.lock.redis.internal.RedisDriver;
import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;
import dev.warden.redis.internal.RedisAccess;
import dev.warden.redis.internal.RedisEndpoint;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code redis} backend, on Lettuce, on one of three topologies named by the endpoints:
 * <ul>
 *   <li>one server: {@code redis://[[user]:password@]host[:port][/database]} ({@code rediss://} for TLS);</li>
 *   <li>Sentinel: {@code redis-sentinel://[[user]:password@]s1[:26379],s2[:26379],.../<master name>}
 *       ({@code rediss-sentinel://}): the primary the sentinels name, found again after a failover;</li>
 *   <li>Cluster: {@code redis-cluster://[[user]:password@]n1[:6379],n2[:6379],...}, seed nodes
 *       ({@code rediss-cluster://}): each lock's scripts run on the primary of its slot.</li>
 * </ul>
 *
 * <p>Each lock uses three names that share the hash tag {@code {<namespace>:<name>}}, so a
 * script touches one Redis Cluster slot:
 * <ul>
 *   <li>{@code {<namespace>:<name>}:lock} — a string {@code <owner>:<token>} with the lease TTL;
 *       acquire sets it only when absent, renew and release compare it first;</li>
 *   <li>{@code {<namespace>:<name>}:fence} — the last fencing token granted, never expiring; each
 *       grant's token is the larger of the last + 1 and the server's clock in microseconds, so tokens
 *       keep increasing across a failover that lost the last grants, or a restart that lost the fence
 *       (as long as the new primary's clock is not behind the old one's by more than the outage);</li>
 *   <li>{@code {<namespace>:<name>}:waiting} — set while a contender of another client waits, so a
 *       release wakes it rather than hand the lock on within one client;</li>
 *   <li>{@code {<namespace>:<name>}:released} — the channel a release publishes on (a sharded channel
 *       on a Cluster), waking waiters; a holder that expires instead wakes them by a backoff of its
 *       remaining TTL, at most one second.</li>
 * </ul>
 *
 * <p>A shared name (a semaphore's {@code semaphore:<name>}, a read-write lock's {@code rw:<name>}) keeps
 * its queue under the same hash tag, in keys of its own: {@code {<namespace>:<name>}:shared:queue} (a
 * sorted set of entry ids in arrival order), {@code :shared:entries} (a hash of each entry's token,
 * weight, limit, expiry and whether it is granted, and the sum of the weights; both keys expire with
 * their last entry), {@code :shared:fence} (the last token, never expiring) and the channel
 * {@code :shared:changed}. Each poll is one script that drops expired entries ahead, refreshes the
 * caller's and grants it when it fits behind them; a waiter polls at least every second (a fifth of the
 * TTL when that is shorter). A lock-only ACL user needs {@code +hget +hset +hdel +zadd +zrem
 * +zrevrangebyscore} besides for them.
 *
 * <p>Credentials as settings, as an alternative to the endpoint's user-info:
 * {@code warden.lock.redis.username} (an ACL user; the default user when unset) and one of
 * {@code warden.lock.redis.password}, {@code warden.lock.redis.password-file} (a file holding the
 * password) or {@code warden.lock.redis.password-env} (the name of an environment variable holding it).
 * A refused login or command is {@code LockException.Reason.ACCESS_DENIED}.
 *
 * <p>One more backend option, {@code warden.lock.redis.address-map}
 * ({@code announced-host:port=reachable-host:port,...}): where to connect for an address the
 * sentinels or the cluster announce, for deployments behind NAT or port forwarding.
 */
public final class RedisLockProvider implements LockProvider {

    @Override
    public String backend() {
        return "redis";
    }

    /** The login, the sentinels' login, TLS and the address map. */
    @Override
    public SettingTable settings() {
        List<Setting<?>> settings = new ArrayList<>(RedisAccess.settings(RedisDriver.SETTINGS));
        settings.add(Setting.text(RedisDriver.SETTINGS + AddressMap.OPTION, null, "`announced-host:port=reachable-host:port,...`:"
                + " where to connect for an address the sentinels or the cluster announce (NAT, port forwarding)"));
        return new SettingTable(RedisDriver.SETTINGS, "Locks: the redis backend", settings);
    }

    @Override
    public List<String> validate(LockConfig config) {
        List<String> problems = new ArrayList<>(RedisEndpoint.problems(config.endpoints()));
        problems.addAll(AddressMap.problems(config.option(AddressMap.OPTION).orElse(null)));
        problems.addAll(RedisAccess.problems(RedisDriver.SETTINGS, config.endpoints(), config.options(), System::getenv));
        return problems;
    }

    /**
     * @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems,
     *         {@code UNAVAILABLE} when the server cannot be reached within the connect timeout
     */
    @Override
    public LockDriver open(LockConfig config) {
        List<String> problems = validate(config);
        if (!problems.isEmpty()) {
            throw new LockException(LockException.Reason.CONFIGURATION,
                    "invalid Redis lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return RedisDriver.open(config);
    }
}
