package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * The ZooKeeper driver, on one Curator client whose session is the lease: its timeout is the
 * configured TTL, and a grant lives as long as its ephemeral node and the session that owns it.
 * The session's connection states are {@link ZooKeeperSession}'s, the node operations
 * {@link Nodes}', the queue algorithm {@link ZooKeeperAttempt}'s (a shared name's
 * {@link SharedAttempt}'s, whose grants are renewed and released as a lock's: through their node).
 * {@link Grants} renews, releases, admits grants and cleans up after them; {@link Lifecycle} builds,
 * connects and closes the Curator client; this class checks it is open and dispatches. With
 * {@code warden.lock.lease-cache} a kept hold's queue is watched for contenders ({@link ContenderWatches}),
 * and lock-api reserves each hold's block of tokens through the token floor.
 *
 * <p>With {@code lost-on=lost}, renewals fail while the connection is SUSPENDED (they neither
 * confirm nor deny), so a lease survives a blip shorter than its validity and expires otherwise. A
 * grant's node is deleted by the driver once no lease can still count on it (its last confirmation
 * plus the TTL) unless it was released: after a loss, or a lease that expired while the session
 * lived on, the lock is not blocked by a node nobody holds.
 *
 * <p>Concurrency: answers are handled on ZooKeeper's event thread where they arrive; admissions of
 * grants and connection states (taken in on the driver's one thread) are ordered by {@link Calls}'
 * monitor; {@code attempts} is a concurrent set (the grants are
 * {@link Grants}' concurrent map), {@code closed} is atomic, {@code sessionLost} volatile.
 */
public final class ZooKeeperDriver implements TokenFloorDriver, LeaseCachingDriver, EpochRecordingDriver,
        HolderEvictingDriver, HolderListingDriver, SharedLockDriver {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperDriver.class);

    /** The option that says which connection state ends the leases. */
    public static final String LOST_ON = "lost-on";

    private final Lifecycle lifecycle;
    private final Calls calls;
    private final Nodes nodes;
    private final RisingNumbers numbers;
    private final ZooKeeperSession session;
    private final Grants grants;
    private final String servers;
    private final String namespace;
    private final Set<TrackedAttempt> attempts = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Consumer<Throwable> sessionLost = cause -> { };

    private ZooKeeperDriver(Lifecycle lifecycle, String servers, LockConfig config, ZooKeeperSession.LostOn lostOn) {
        this.lifecycle = lifecycle;
        this.servers = servers;
        this.namespace = config.namespace();
        this.calls = new Calls(lifecycle.executor(), config.requestTimeout(), servers);
        this.nodes = new Nodes(lifecycle.curator(), calls, lifecycle.security().acl());
        this.numbers = new RisingNumbers(nodes);
        this.session = new ZooKeeperSession(servers, lostOn, () -> List.copyOf(attempts).forEach(TrackedAttempt::interrupt));
        this.grants = new Grants(calls, nodes, session, servers, config.ttl(), this::isClosed);
        session.onLost(cause -> {
            if (grants.size() > 0) {
                log.warn("{}: {} lease(s) lost", cause.getMessage(), grants.size());
            }
            sessionLost.accept(cause);
        });
    }

    /**
     * Connects within the connect timeout and checks the session the servers granted.
     *
     * @throws LockException {@code UNAVAILABLE} when no server answers in time; {@code CONFIGURATION}
     *         when the servers cap the session below the TTL (a lease would outlive its session)
     */
    public static ZooKeeperDriver open(LockConfig config) {
        String servers = Endpoints.connectString(config.endpoints());
        ZooKeeperSession.LostOn lostOn = config.option(LOST_ON).map(ZooKeeperSession.LostOn::parse)
                .orElse(ZooKeeperSession.LostOn.SUSPENDED);
        Lifecycle lifecycle = Lifecycle.build(config, servers);
        ZooKeeperDriver driver = new ZooKeeperDriver(lifecycle, servers, config, lostOn);
        lifecycle.listen(driver.session, driver.calls);
        try {
            lifecycle.connect(driver.session, config);
            return driver;
        } catch (InterruptedException e) {
            driver.close();
            throw LockException.interrupted("interrupted while connecting to ZooKeeper at " + servers, e);
        } catch (LockException e) {
            driver.close();
            throw e;
        } catch (Exception e) {
            driver.close();
            throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to ZooKeeper at " + servers
                    + ": " + e.getMessage(), e);
        }
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        checkOpen();
        ZooKeeperAttempt attempt = new ZooKeeperAttempt(this, name, Paths.lockPath(namespace, name),
                owner.getBytes(StandardCharsets.UTF_8));
        attempts.add(attempt);
        return attempt;
    }

    /** An entry under the name's own parent, {@code /<ns>/%shared-<encoded name>} ({@link SharedQueue}). */
    @Override
    public LockAttempt attemptShared(String name, String owner, Share share) {
        checkOpen();
        SharedAttempt attempt = new SharedAttempt(this, name, Paths.sharedPath(namespace, name), share,
                owner.getBytes(StandardCharsets.UTF_8));
        attempts.add(attempt);
        return attempt;
    }

    /** Still mine: the grant's epoch and its node's czxid ({@link Grants#renew}). */
    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        ZooKeeperGrant g = ZooKeeperGrant.held(grant);
        checkOpen();
        return grants.renew(g);
    }

    /** Compare-and-delete of the grant's node, retried in the background when unconfirmed ({@link Grants#release}). */
    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        ZooKeeperGrant g = ZooKeeperGrant.held(grant);
        checkOpen();
        return grants.release(g);
    }

    /** The queue's first contender ({@link QueueHead}): three reads, two round trips. */
    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        checkOpen();
        String lockPath = Paths.lockPath(namespace, name);
        return calls.bounded("reading the holder of " + lockPath, QueueHead.read(nodes, lockPath));
    }

    /** The namespace's children, then each lock's head ({@link QueueHead#list}); shared names are not listed. */
    @Override
    public CompletionStage<List<NamedHolder>> holders(Duration limit) {
        checkOpen();
        return QueueHead.list(nodes, "/" + namespace).orTimeout(limit.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** The queue's first contender, its mark and its node in one transaction ({@link QueueHead}). */
    @Override
    public CompletionStage<Boolean> evict(String name, long token) {
        checkOpen();
        String lockPath = Paths.lockPath(namespace, name);
        return calls.bounded("evicting the holder of " + lockPath, QueueHead.evict(nodes, lockPath, token));
    }

    @Override
    public CompletionStage<Boolean> evicted(Grant grant) {
        ZooKeeperGrant g = ZooKeeperGrant.of(grant);
        checkOpen();
        String lockPath = g.path().substring(0, g.path().lastIndexOf('/'));
        return calls.bounded("reading the evicted mark of " + lockPath, QueueHead.evicted(nodes, lockPath, g.czxid()));
    }

    /**
     * A child watch on the lock's queue, set again at each change ({@link ContenderWatches}): one read to
     * start it, one more per change of the queue while the hold is kept. Shared names are not kept.
     */
    @Override
    public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
        checkOpen();
        String lockPath = Paths.lockPath(namespace, name);
        if (!(grant instanceof ZooKeeperGrant g) || !g.path().startsWith(lockPath + "/")) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL, "only a hold of lock '"
                    + name + "' itself is watched for contenders (shared names are never kept), not " + grant));
        }
        return ContenderWatches.start(calls, nodes, name, lockPath, Paths.nodeName(g.path()), asked);
    }

    /** The namespace's floor node ({@link RisingNumbers#raiseFloor}). */
    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        ZooKeeperGrant g = ZooKeeperGrant.of(grant);
        checkOpen();
        return calls.bounded("raising the token floor for " + g.path(), numbers.raiseFloor(g, floor));
    }

    /**
     * Moves the namespace's floor to the grant's own floor plus {@code count - 1}: every later grant of the lock
     * was queued after it, so its czxid is above the grant's and its token above the reserved ones. (Raising
     * the floor to the last reserved token would add a czxid, billions in an ensemble, at every reservation.)
     */
    @Override
    public CompletionStage<Boolean> reserveTokens(Grant grant, int count) {
        ZooKeeperGrant g = ZooKeeperGrant.of(grant);
        checkOpen();
        return calls.bounded("reserving fencing tokens for " + g.path(), numbers.raiseFloorValue(g, g.floor() + count - 1));
    }

    /** The namespace's epoch node ({@link RisingNumbers#recordEpoch}). */
    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        checkOpen();
        String path = Paths.epochPath(namespace);
        return calls.bounded("recording the fencing epoch " + path, numbers.recordEpoch(path, epoch));
    }

    @Override
    public void onSessionLost(Consumer<Throwable> listener) {
        sessionLost = listener;
    }

    /** Closes the session (ZooKeeper deletes its nodes) and ends every thread the driver started. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (TrackedAttempt a : List.copyOf(attempts)) {
            a.closed();
        }
        lifecycle.close();
    }

    // ----- for attempts ---------------------------------------------------------------------------

    boolean isClosed() {
        return closed.get();
    }

    Calls calls() {
        return calls;
    }

    Nodes nodes() {
        return nodes;
    }

    ZooKeeperSession session() {
        return session;
    }

    /** The ZooKeeper handle of the moment, for tests that look at its connection. */
    org.apache.zookeeper.ZooKeeper zooKeeper() throws Exception {
        return lifecycle.zooKeeper();
    }

    void forget(TrackedAttempt attempt) {
        attempts.remove(attempt);
    }

    /** Hands a grant over, in order with connection states, if the connection held since the poll began. */
    void admit(ZooKeeperGrant grant, String name) {
        grants.admit(grant, name);
    }

    static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the lock client is closed");
    }

    private void checkOpen() {
        if (isClosed()) {
            throw new LockException(LockException.Reason.CLOSED, "the ZooKeeper lock driver for " + servers + " is closed");
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperDriver[" + servers + ", lost-on " + session.lostOn().name().toLowerCase(Locale.ROOT) + ", acl "
                + lifecycle.security().aclSetting() + (lifecycle.security().tls() ? ", TLS" : "") + "]";
    }
}
