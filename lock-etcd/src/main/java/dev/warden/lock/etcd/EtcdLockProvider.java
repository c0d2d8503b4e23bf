package dev.warden.lock.etcd;

import dev.warden.lock.LockException;
import dev.warden.lock.etcd.internal.Credentials;
import dev.warden.lock.etcd.internal.EtcdDriver;
import dev.warden.lock.etcd.internal.Endpoints;
import dev.warden.lock.settings.AccessSettings;
import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code etcd} backend: etcd's KV, Lease and Watch services (protocol messages from jetcd) over
 * one gRPC channel per client, rather than etcd's Lock RPC (which cannot be cancelled and can grant
 * a waiter whose lease already died). Endpoints are one or more {@code etcd://host:port} (plain-text
 * gRPC) or {@code etcds://host:port} (gRPC over TLS), the members of one cluster, all with the same
 * scheme.
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
 *   <li><b>Leases kept</b> ({@code warden.lock.lease-cache}): a kept hold watches its queue prefix from
 *       the revision after its key was created (one watch stream, and one read when anything was written
 *       between the grant and the watch), so an entry queued behind it, before or after the watch started,
 *       ends it; a compacted start revision, or a watch that ended, lets the hold go. lock-api reserves the
 *       hold's block of tokens at its first release by raising the namespace's token floor (a read and a
 *       transaction per server grant), so a holder read may then show a token above a holder's own. A
 *       grant that may be kept counts from a keep-alive sent with its poll once the session's last is older
 *       than a sixth of the TTL, so it stays fresh (kept) long enough.</li>
 *   <li><b>Deadlines</b>: every call but a watch is bounded by {@code warden.lock.request-timeout};
 *       reads are linearizable, so a partitioned member answers with an error or not at all, never
 *       with stale data that grants a lock.</li>
 * </ul>
 *
 * <p>An uncontended acquire and release cost two round trips, both transactions.
 *
 * <p><b>Security</b> (backend options, each secret inline, in a file ({@code -file}) or in an
 * environment variable ({@code -env}), never printed):
 * <ul>
 *   <li>{@code warden.lock.etcd.username} and {@code warden.lock.etcd.password} (or
 *       {@code password-file}, {@code password-env}): an etcd user. The driver authenticates
 *       ({@code Auth.Authenticate}) and sends the token on every call, keep-alives and watches
 *       included; a token the server no longer accepts (expired simple token, or a change of users
 *       and roles) is replaced and the call sent again once, and the session's lease is kept. A
 *       refused login or a missing permission is {@code LockException.Reason.ACCESS_DENIED}.</li>
 *   <li>{@code warden.lock.etcd.tls.trust-store} (PKCS12 or JKS; the JVM's default trust when unset)
 *       and {@code tls.trust-store-password}; {@code tls.key-store} and {@code tls.key-store-password}
 *       for a client certificate ({@code --client-cert-auth}). TLS is on exactly when the endpoints
 *       are {@code etcds://}; {@code tls.*} settings with {@code etcd://} endpoints are a
 *       configuration error. The member's certificate and its host name or IP address are always
 *       verified; a failed handshake is {@code UNAVAILABLE}, naming the endpoint.</li>
 * </ul>
 * The user needs one role: {@code readwrite} on the key prefix {@code <namespace>/} (the namespace
 * percent-encoded as in the keys above; {@code !} markers of abandoned attempts live there too), for
 * example {@code etcdctl role add warden-billing},
 * {@code etcdctl role grant-permission warden-billing --prefix=true readwrite billing/},
 * {@code etcdctl user grant-role billing-svc warden-billing}. Granting, keeping alive and revoking
 * the session's lease need no permission beyond being authenticated.
 */
public final class EtcdLockProvider implements LockProvider {

    private static final String PREFIX = "warden.lock.etcd.";

    @Override
    public String backend() {
        return "etcd";
    }

    @Override
    public Duration ttlGranularity() {
        return Duration.ofSeconds(1);
    }

    /** The user and password, and TLS. */
    @Override
    public SettingTable settings() {
        List<Setting<?>> settings = new ArrayList<>(AccessSettings.login(PREFIX, "the etcd"));
        settings.addAll(AccessSettings.tls(PREFIX));
        return new SettingTable(PREFIX, "Locks: the etcd backend", settings);
    }

    @Override
    public List<String> validate(LockConfig config) {
        List<String> problems = new ArrayList<>(Endpoints.problems(config.endpoints()));
        problems.addAll(Credentials.problems(config.options(), System::getenv));
        problems.addAll(Credentials.tlsProblems(config.endpoints(), config.options(), System::getenv));
        return problems;
    }

    /**
     * @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems, a TLS store
     *         cannot be read, or the cluster's minimum lease TTL is above the configured TTL;
     *         {@code ACCESS_DENIED} when etcd refuses the user's login; {@code UNAVAILABLE} when no
     *         member grants a lease within the connect timeout or the TLS handshake fails
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
