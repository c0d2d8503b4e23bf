package dev.warden.lock.etcd;

import dev.warden.lock.LockException;
import dev.warden.lock.etcd.internal.EtcdDriver;
import dev.warden.lock.etcd.internal.Endpoints;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.time.Duration;
import java.util.List;

/**
 * The {@code etcd} backend: etcd's KV, Lease and Watch services (protocol messages from jetcd) over
 * one gRPC channel per client, rather than etcd's Lock RPC (which cannot be cancelled and can grant
 * a waiter whose lease already died). Endpoints are one or more {@code etcd://host:port}, plain-text
 * gRPC to the members of one cluster.
 *
 * <ul>
 *   <li><b>Session</b>: one etcd lease per client, its TTL the configured {@code warden.lock.ttl}
 *       (whole seconds; etcd refuses TTLs below its minimum of about 1.5 election timeouts, and so
 *       does this backend, rather than letting a lock outlive its configured TTL). It is kept alive
 *       every TTL/3. A keep-alive that finds the lease gone, or the TTL passing on the local
 *       monotonic clock without a confirmed keep-alive, loses the session: every lease granted on
 *       it is reported lost at once, and later acquisitions use a new etcd lease.</li>
 *   <li><b>Queue</b>: an acquisition puts {@code <namespace>/<name>/<lease>} (namespace and name
 *       percent-encoded, so neither can contain the separator; one key per session and lock, reused
 *       by the session's successive acquisitions) with the session's lease, in one transaction that
 *       also reads the entry ahead. The key with the lowest create revision under
 *       {@code <namespace>/<name>/} holds the lock; every other key watches the deletion of the key
 *       just ahead of it, so a release wakes one waiter. A grant is returned only after a read
 *       confirmed the key is still there and first; its TTL counts from the send time of the
 *       session's last confirmed keep-alive, the latest moment from which the server keeps the
 *       lease (and the key) for a TTL.</li>
 *   <li><b>Fencing token</b>: the holder key's create revision, which increases across the whole
 *       cluster (a reused key gets a new one each time it is created).</li>
 *   <li><b>Renewal</b>: a keep-alive of the session's lease and a read of the holder's key, which
 *       must still exist with the granted create revision. <b>Release</b>: a transaction that
 *       deletes the key only if its create revision is still the granted one.</li>
 *   <li><b>Deadlines</b>: every call but a watch is bounded by {@code warden.lock.request-timeout};
 *       reads are linearizable, so a partitioned member answers with an error or not at all, never
 *       with stale data that grants a lock.</li>
 * </ul>
 *
 * <p>An uncontended acquire and release cost two round trips, both transactions. It has no backend
 * options.
 */
public final class EtcdLockProvider implements LockProvider {

    @Override
    public String backend() {
        return "etcd";
    }

    @Override
    public Duration ttlGranularity() {
        return Duration.ofSeconds(1);
    }

    @Override
    public List<String> validate(LockConfig config) {
        return Endpoints.problems(config.endpoints());
    }

    /**
     * @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems or the
     *         cluster's minimum lease TTL is above the configured TTL, {@code UNAVAILABLE} when no
     *         member grants a lease within the connect timeout
     */
    @Override
    public LockDriver open(LockConfig config) {
        List<String> problems = validate(config);
        if (!problems.isEmpty()) {
            throw new LockException(LockException.Reason.CONFIGURATION,
                    "invalid etcd lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return EtcdDriver.open(config);
    }
}
