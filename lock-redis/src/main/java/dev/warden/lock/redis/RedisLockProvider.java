package dev.warden.lock.redis;

import dev.warden.lock.LockException;
import dev.warden.lock.redis.internal.Endpoints;
import dev.warden.lock.redis.internal.RedisDriver;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.util.List;

/**
 * The {@code redis} backend, on Lettuce: one standalone Redis server, named by exactly one endpoint
 * {@code redis://[[user]:password@]host[:port][/database]} or {@code rediss://...} for TLS.
 *
 * <p>Each lock uses three names that share the hash tag {@code {<namespace>:<name>}}, so a
 * script touches one Redis Cluster slot:
 * <ul>
 *   <li>{@code {<namespace>:<name>}:lock} — a string {@code <owner>:<token>} with the lease TTL;
 *       acquire sets it only when absent, renew and release compare it first;</li>
 *   <li>{@code {<namespace>:<name>}:fence} — the fencing counter, incremented by each grant in the
 *       same script and never expiring, so tokens never go back (unless the server loses data:
 *       replication is asynchronous and a restart without persistence starts again from 1);</li>
 *   <li>{@code {<namespace>:<name>}:released} — the pub/sub channel a release publishes on,
 *       waking waiters; a holder that expires instead wakes them by a backoff of its remaining TTL,
 *       at most one second.</li>
 * </ul>
 *
 * <p>It has no backend options. Cluster and Sentinel endpoints are refused until supported.
 */
public final class RedisLockProvider implements LockProvider {

    @Override
    public String backend() {
        return "redis";
    }

    @Override
    public List<String> validate(LockConfig config) {
        return Endpoints.problems(config.endpoints());
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
