package dev.warden.lock.zookeeper;

import dev.warden.lock.LockException;
import dev.warden.lock.settings.AccessSettings;
import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;
import dev.warden.lock.zookeeper.internal.ConfigProblems;
import dev.warden.lock.zookeeper.internal.Security;
import dev.warden.lock.zookeeper.internal.ZooKeeperDriver;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code zookeeper} backend, on Apache Curator: endpoints {@code zookeeper://host[:port]}, one per
 * server (list every member of an ensemble).
 *
 * <p>The client's ZooKeeper session is the lease: its timeout is {@code warden.lock.ttl}. A lock
 * {@code <name>} is a queue of ephemeral sequential nodes under the container
 * {@code /<namespace>/<encoded name>} ('/', '%' and characters ZooKeeper refuses are %-encoded),
 * created with Curator's protection so a create whose reply was lost leaves no orphan holder
 * (ZOOKEEPER-1262). The first node holds the lock; each waiter watches only the node ahead of it.
 * The fencing token is the holder node's {@code czxid}, which increases across the ensemble and
 * never restarts, unlike the sequence suffix.
 *
 * <p>A shared name (semaphore, read-write lock) queues the same way under its own container
 * {@code /<namespace>/%shared-<encoded name>}, each entry's node name carrying its weight and limit;
 * an entry holds once the weights ahead of it and its own fit its limit, and its token is its czxid.
 * Operators' listing and forced releases cover locks only and skip these.
 *
 * <p>Option {@code warden.lock.zookeeper.lost-on}: {@code suspended} (default) ends every lease as
 * soon as the connection is suspended, as Curator's tech note 14 advises, since from then on the
 * client cannot tell whether its session still lives; {@code lost} keeps leases through a suspension
 * shorter than their validity and ends them when the session is lost. A later reconnection never
 * revives a lost lease.
 *
 * <p>Security (issue 14), all under {@code warden.lock.zookeeper.}; no setting ever appears in a
 * message, {@code toString} or log line ({@link dev.warden.lock.Redaction}):
 * <ul>
 *   <li>{@code username} and one of {@code password}, {@code password-file} (a file holding it) or
 *       {@code password-env} (the name of an environment variable holding it): a digest identity, sent
 *       as Curator's {@code authorization("digest", user:password)} on every connection. Credentials in
 *       the endpoint are refused. ZooKeeper never refuses a digest at connect: a wrong password is just
 *       an identity the ACLs refuse.</li>
 *   <li>{@code acl}, the ACL of every node Warden creates (the namespace node, each lock's node, each
 *       contender's node): {@code creator} (the default with a user: only that digest user may read,
 *       write, create under or delete under them, {@code CREATOR_ALL_ACL}), {@code creator-read-world}
 *       (the same, and anyone may read) or {@code open} (anyone may do anything; the default, and the
 *       only choice, without a user — then any client of the ensemble can delete a holder's node and so
 *       take its lock). With a protecting ACL the namespace node {@code /<namespace>} is created at open
 *       as a persistent node owned by the user, so the server never reaps it and no other user can take
 *       the namespace over; when it exists and does not let this identity create, read and delete, the
 *       client does not open ({@code ACCESS_DENIED}). A namespace node is deleted by whoever ZooKeeper's
 *       root ACL allows: restrict {@code /} to create and read for everyone so an emptied namespace
 *       cannot be deleted and claimed. A request the server refuses ({@code NoAuth}, {@code InvalidACL},
 *       {@code AuthFailed}) is {@code LockException.Reason.ACCESS_DENIED}; nothing is held.</li>
 *   <li>{@code tls.trust-store} (PKCS12, or JKS by its {@code .jks} name; the CAs to trust the servers
 *       by) with {@code tls.trust-store-password[-file|-env]} and, for client certificates,
 *       {@code tls.key-store} with {@code tls.key-store-password[-file|-env]}: TLS to the servers'
 *       {@code secureClientPort}, set on this client's own {@code ZKClientConfig} (several clients share a
 *       JVM; no system property is touched), on ZooKeeper's Netty client, with host name verification.
 *       That client links Netty's epoll classes, which this module brings
 *       ({@code io.netty:netty-transport-classes-epoll}, classes only); a build that excludes them has its
 *       TLS settings refused by {@link #validate}. A handshake the servers or this client refuse (an
 *       unknown CA, an expired certificate, no client certificate, a plaintext port) is
 *       {@code UNAVAILABLE} after the connect timeout, naming the endpoint.</li>
 * </ul>
 * SASL (Kerberos) is not covered: it needs a JAAS configuration, which ZooKeeper reads per JVM, not
 * per client; its client is off ({@code zookeeper.sasl.client=false}).
 */
public final class ZooKeeperLockProvider implements LockProvider {

    private static final String PREFIX = "warden.lock.zookeeper.";

    @Override
    public String backend() {
        return "zookeeper";
    }

    /** The digest user, the nodes' ACL, TLS, and when a lease ends. */
    @Override
    public SettingTable settings() {
        List<Setting<?>> settings = new ArrayList<>(AccessSettings.login(PREFIX, "the digest (no `:` in the name)"));
        settings.add(Setting.text(PREFIX + "acl", null, "the ACL of every node Warden creates: `creator` (only that user;"
                + " the default with a user), `creator-read-world` (and anyone may read), `open` (the default without a user)"));
        settings.addAll(AccessSettings.tls(PREFIX));
        settings.add(Setting.text(PREFIX + ZooKeeperDriver.LOST_ON, "suspended", "`suspended`: a suspended connection ends"
                + " every lease (Curator tech note 14); `lost`: only a lost session does"));
        return new SettingTable(PREFIX, "Locks: the zookeeper backend", settings);
    }

    @Override
    public List<String> validate(LockConfig config) {
        return ConfigProblems.of(config);
    }

    /**
     * @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems or the servers
     *         cap the session below the TTL, {@code UNAVAILABLE} when no server answers within the
     *         connect timeout, {@code ACCESS_DENIED} when the namespace node does not admit the user
     */
    @Override
    public LockDriver open(LockConfig config) {
        List<String> problems = validate(config);
        if (!problems.isEmpty()) {
            throw new LockException(LockException.Reason.CONFIGURATION,
                    "invalid ZooKeeper lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return ZooKeeperDriver.open(config);
    }
}
