package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import org.apache.zookeeper.KeeperException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * The grants the ZooKeeper driver handed out (a lock's and a shared name's alike: through their
 * node): admitted in order with connection states, renewed, released, and deleted at their horizon
 * when still unreleased there, so a lock is never blocked by a node nobody holds.
 * {@link ZooKeeperDriver} dispatches here once it checked it is open.
 *
 * <p>Concurrency: {@code grants} is a concurrent map; admissions run in order with connection states
 * ({@link Calls#decided}), horizons on the driver's thread; the rest is final.
 */
final class Grants {

    // The driver's category, as before this class was split from it: log settings naming it still apply.
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperDriver.class);

    private final Calls calls;
    private final Nodes nodes;
    private final ZooKeeperSession session;
    private final String servers;
    private final long ttlNanos;
    private final BooleanSupplier closed;
    private final Map<String, ZooKeeperGrant> grants = new ConcurrentHashMap<>();

    Grants(Calls calls, Nodes nodes, ZooKeeperSession session, String servers, Duration ttl, BooleanSupplier closed) {
        this.calls = calls;
        this.nodes = nodes;
        this.session = session;
        this.servers = servers;
        this.ttlNanos = ttl.toNanos();
        this.closed = closed;
    }

    /** How many grants are admitted and not released (nor past their horizon). */
    int size() {
        return grants.size();
    }

    /**
     * Still mine: the grant is from the current connection epoch and its node exists with the same
     * czxid. While the connection is suspended (only with {@code lost-on=lost}) this fails rather than
     * answers, so the lease keeper retries until its deadline.
     */
    CompletableFuture<Boolean> renew(ZooKeeperGrant g) {
        long sentAt = System.nanoTime();
        if (g.epoch() != session.epoch()) {
            return CompletableFuture.completedFuture(false);
        }
        if (!session.isConnected()) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.UNAVAILABLE,
                    "the connection to ZooKeeper at " + servers + " is suspended; cannot confirm " + g.path()));
        }
        // Decided where the answer arrives: a lease lost meanwhile stays lost whatever it says.
        return calls.bounded("the renewal check of " + g.path(), nodes.stat(g.path())).thenApply(stat -> {
            if (g.epoch() != session.epoch() || stat == null || stat.getCzxid() != g.czxid()) {
                return false;
            }
            g.confirmed(sentAt);
            return true;
        });
    }

    /**
     * Compare-and-delete in one request: deletes the grant's node guarded by the version it was
     * created (or first read) with. The path is this grant's alone (its name carries the create's
     * UUID, and ZooKeeper numbers it), so a node found there is this grant's node: no read first.
     * NoNode means it is no longer this grant's. BadVersion (someone else changed the node's data)
     * falls back to reading the node and comparing its czxid before deleting it. When the outcome is
     * unknown the node is deleted in the background, guaranteed while the session lives.
     */
    CompletableFuture<Boolean> release(ZooKeeperGrant g) {
        grants.remove(g.path(), g);
        g.cancelCleanup();
        CompletableFuture<Boolean> released = nodes.delete(g.path(), g.version()).thenCompose(code -> {
            if (code != KeeperException.Code.BADVERSION) {
                return CompletableFuture.completedFuture(code == KeeperException.Code.OK);
            }
            return nodes.stat(g.path()).thenCompose(stat -> stat == null || stat.getCzxid() != g.czxid()
                    ? CompletableFuture.completedFuture(false)
                    : nodes.delete(g.path(), stat.getVersion()).thenApply(again -> again == KeeperException.Code.OK));
        });
        released.whenComplete((removed, error) -> {
            if (error != null) {
                deleteQuietly(g.path());
            }
        });
        return calls.bounded("the release of " + g.path(), released);
    }

    /**
     * Hands a grant over, in order with connection states ({@link Calls#decided}): only if the connection
     * did not drop since the poll began (else the poll fails and the loop's abandon deletes the node).
     */
    void admit(ZooKeeperGrant grant, String name) {
        if (closed.getAsBoolean()) {
            throw ZooKeeperDriver.closedException();
        }
        if (grant.epoch() != session.epoch() || !session.isConnected()) {
            throw new LockException(LockException.Reason.UNAVAILABLE, "the connection to ZooKeeper at " + servers
                    + " dropped while lock '" + name + "' was being granted");
        }
        grants.put(grant.path(), grant);
        scheduleHorizon(grant);
    }

    /**
     * A grant's horizon is its last confirmation (the send time of the poll or renewal that found it
     * still held) plus the TTL: lock-api counts a lease's validity from the same sends, so no lease can
     * rely on the grant after it. A grant still unreleased there (its lease expired or was lost, and the
     * session lives on) has its node deleted, so a lock is never blocked by a node nobody holds.
     */
    private void scheduleHorizon(ZooKeeperGrant g) {
        long delay = Math.max(0, g.confirmedAtNanos() + ttlNanos - System.nanoTime());
        g.cleanup(calls.schedule(() -> horizon(g), delay, TimeUnit.NANOSECONDS));
    }

    private void horizon(ZooKeeperGrant g) {
        if (grants.get(g.path()) != g) {
            return;
        }
        if (g.confirmedAtNanos() + ttlNanos - System.nanoTime() > 0) {
            scheduleHorizon(g);
            return;
        }
        if (grants.remove(g.path(), g)) {
            log.debug("{} passed its horizon unreleased; deleting its node", g);
            deleteQuietly(g.path());
        }
    }

    private void deleteQuietly(String path) {
        if (closed.getAsBoolean()) {
            return;
        }
        nodes.delete(path).whenComplete((v, error) -> {
            if (error != null) {
                log.debug("background delete of {} not confirmed yet; Curator keeps trying while the session lives", path, error);
            }
        });
    }
}
