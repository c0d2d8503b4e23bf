package dev.warden.lock.zookeeper;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;
import dev.warden.lock.zookeeper.internal.Security;
import dev.warden.lock.zookeeper.internal.ZooKeeperDriver;

import java.util.List;
import java.util.Set;

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
 * <p>Option {@code warden.lock.zookeeper.lost-on}: {@code suspended} (default) ends every lease as
 * soon as the connection is suspended, as Curator's tech note 14 advises, since from then on the
 * client cannot tell whether its session still lives; {@code lost} keeps leases through a suspension
 * shorter than their validity and ends them when the session is lost. A later reconnection never
 * revives a lost lease.
 */
public final class ZooKeeperLockProvider implements LockProvider {

    @Override
    public String backend() {
        return "zookeeper";
    }

    @Override
    public Set<String> optionNames() {
        Set<String> names = new java.util.HashSet<>(Security.OPTIONS);
        names.add(ZooKeeperDriver.LOST_ON);
        return Set.copyOf(names);
    }

    @Override
    public List<String> validate(LockConfig config) {
        return ZooKeeperDriver.problems(config);
    }

    /**
     * @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems or the servers
     *         cap the session below the TTL, {@code UNAVAILABLE} when no server answers within the
     *         connect timeout
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
