package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.client.ZKClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The ZooKeeper driver, on one Curator client whose session is the lease: its timeout is the
 * configured TTL, and a grant lives as long as its ephemeral node and the session that owns it.
 * The session's connection states are {@link ZooKeeperSession}'s, the node operations
 * {@link Nodes}', the queue algorithm {@link ZooKeeperAttempt}'s (a shared name's
 * {@link SharedAttempt}'s, whose grants are renewed and released as a lock's: through their node);
 * this class renews, releases, admits grants and cleans up after them.
 *
 * <p>With {@code lost-on=lost}, renewals fail while the connection is SUSPENDED (they neither
 * confirm nor deny), so a lease survives a blip shorter than its validity and expires otherwise. A
 * grant's node is deleted by the driver once no lease can still count on it (its last confirmation
 * plus the TTL) unless it was released: after a loss, or a lease that expired while the session
 * lived on, the lock is not blocked by a node nobody holds.
 *
 * <p>Concurrency: everything that decides runs on the driver's one thread (Curator callbacks,
 * connection states, admissions of grants); {@code grants} and {@code attempts} are concurrent
 * collections, {@code closed} is atomic.
 */
public final class ZooKeeperDriver implements TokenFloorDriver, EpochRecordingDriver, HolderEvictingDriver,
        HolderListingDriver, SharedLockDriver {

    private static final Logger log = LoggerFactory.getLogger(ZooKeeperDriver.class);
    private static final AtomicInteger DRIVERS = new AtomicInteger();
    private static final int SHUTDOWN_WAIT_MS = 2_000;
    private static final int RETRY_SLEEP_MS = 50;

    /** The option that says which connection state ends the leases. */
    public static final String LOST_ON = "lost-on";

    private final CuratorFramework curator;
    private final ScheduledThreadPoolExecutor executor;
    private final Calls calls;
    private final Nodes nodes;
    private final RisingNumbers numbers;
    private final ZooKeeperSession session;
    private final String servers;
    private final String namespace;
    private final Security security;
    private final long ttlNanos;
    private final Map<String, ZooKeeperGrant> grants = new ConcurrentHashMap<>();
    private final Set<TrackedAttempt> attempts = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Consumer<Throwable> sessionLost = cause -> { };

    private ZooKeeperDriver(CuratorFramework curator, ScheduledThreadPoolExecutor executor, String servers,
                            LockConfig config, ZooKeeperSession.LostOn lostOn, Security security) {
        this.curator = curator;
        this.security = security;
        this.executor = executor;
        this.servers = servers;
        this.namespace = config.namespace();
        this.ttlNanos = config.ttl().toNanos();
        this.calls = new Calls(executor, config.requestTimeout(), servers);
        this.nodes = new Nodes(curator, executor, calls);
        this.numbers = new RisingNumbers(nodes);
        this.session = new ZooKeeperSession(servers, lostOn, () -> List.copyOf(attempts).forEach(TrackedAttempt::interrupt));
        session.onLost(cause -> {
            if (!grants.isEmpty()) {
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
        int n = DRIVERS.incrementAndGet();
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, daemon("warden-zookeeper-" + n));
        executor.setRemoveOnCancelPolicy(true);
        Security security = Security.of(config.options(), System::getenv);
        // This client's own configuration, never JVM system properties: several clients share a JVM.
        ZKClientConfig zkConfig = new ZKClientConfig();
        zkConfig.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, "false");
        int ttlMillis = (int) config.ttl().toMillis();
        int connectMillis = (int) Math.max(1, config.connectTimeout().toMillis());
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder();
        security.applyTo(builder, zkConfig);
        CuratorFramework curator = builder
                .connectString(servers)
                .sessionTimeoutMs(ttlMillis)
                // Curator's own wait for a connection (background calls while disconnected); the connect
                // timeout itself is enforced below. Capped by the session, which Curator expects.
                .connectionTimeoutMs(Math.min(connectMillis, ttlMillis))
                // Curator retries a lost connection (and finds a protected node again) until about when
                // the call's own deadline passes; a protected create that gives up is deleted by Curator.
                .retryPolicy(new RetryWithinDeadline((int) Math.max(1, config.requestTimeout().toMillis()), RETRY_SLEEP_MS))
                .ensembleTracker(false)
                .threadFactory(daemon("warden-zookeeper-curator-" + n))
                .runSafeService(executor)
                .zkClientConfig(zkConfig)
                .waitForShutdownTimeoutMs(SHUTDOWN_WAIT_MS)
                .maxCloseWaitMs(SHUTDOWN_WAIT_MS)
                .build();
        ZooKeeperDriver driver = new ZooKeeperDriver(curator, executor, servers, config, lostOn, security);
        curator.getConnectionStateListenable().addListener((client, state) -> driver.session.stateChanged(state), executor);
        try {
            curator.start();
            try {
                driver.session.firstConnected().get(connectMillis, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // ZooKeeper's client only logs why a handshake failed and tries again: the hint lists the causes.
                throw new LockException(LockException.Reason.UNAVAILABLE, "could not connect to ZooKeeper at " + servers
                        + " within " + connectMillis + " ms" + (security.tls()
                        ? " over TLS (is it the servers' secureClientPort; do warden.lock.zookeeper.tls.trust-store's CAs"
                        + " sign their certificates for that host, valid now; do the servers require a client certificate,"
                        + " warden.lock.zookeeper.tls.key-store, signed by a CA they trust?)"
                        : " (if that is a secureClientPort, it takes TLS clients only: warden.lock.zookeeper.tls.trust-store)"), e);
            }
            int negotiated = curator.getZookeeperClient().getZooKeeper().getSessionTimeout();
            if (negotiated < ttlMillis) {
                throw new LockException(LockException.Reason.CONFIGURATION, "ZooKeeper at " + servers
                        + " granted a session of " + negotiated + " ms, shorter than warden.lock.ttl " + config.ttl()
                        + ": a lease would outlive its session; lower the TTL or raise the servers' maxSessionTimeout");
            }
            if (negotiated > ttlMillis) {
                log.warn("ZooKeeper at {} granted a session of {} ms for warden.lock.ttl {} (the servers' minSessionTimeout):"
                        + " locks of a dead holder are freed only after the longer session", servers, negotiated, config.ttl());
            }
            if (security.protectsNodes()) {
                Namespaces.ensure(curator, security, "/" + config.namespace(), servers);
            }
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

    /**
     * Still mine: the grant is from the current connection epoch and its node exists with the same
     * czxid. While the connection is suspended (only with {@code lost-on=lost}) this fails rather than
     * answers, so the lease keeper retries until its deadline.
     */
    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        ZooKeeperGrant g = ZooKeeperGrant.held(grant);
        checkOpen();
        long sentAt = System.nanoTime();
        if (g.epoch() != session.epoch()) {
            return CompletableFuture.completedFuture(false);
        }
        if (!session.isConnected()) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.UNAVAILABLE,
                    "the connection to ZooKeeper at " + servers + " is suspended; cannot confirm " + g.path()));
        }
        return calls.bounded("the renewal check of " + g.path(), nodes.stat(g.path()), late -> { }, stat -> {
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
    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        ZooKeeperGrant g = ZooKeeperGrant.held(grant);
        checkOpen();
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

    /** The namespace's floor node ({@link RisingNumbers#raiseFloor}). */
    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        ZooKeeperGrant g = ZooKeeperGrant.of(grant);
        checkOpen();
        return calls.bounded("raising the token floor for " + g.path(), numbers.raiseFloor(g, floor));
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
        try {
            curator.close();
        } catch (RuntimeException e) {
            log.debug("Curator close failed", e);
        }
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(SHUTDOWN_WAIT_MS, TimeUnit.MILLISECONDS)) {
                log.warn("the ZooKeeper driver thread did not stop within {} ms", SHUTDOWN_WAIT_MS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
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
        return curator.getZookeeperClient().getZooKeeper();
    }

    void forget(TrackedAttempt attempt) {
        attempts.remove(attempt);
    }

    /**
     * Hands a grant over, on the driver thread: only if the connection did not drop since the poll
     * began (else the poll fails and the loop's abandon deletes the node).
     */
    void admit(ZooKeeperGrant grant, String name) {
        if (isClosed()) {
            throw closedException();
        }
        if (grant.epoch() != session.epoch() || !session.isConnected()) {
            throw new LockException(LockException.Reason.UNAVAILABLE, "the connection to ZooKeeper at " + servers
                    + " dropped while lock '" + name + "' was being granted");
        }
        grants.put(grant.path(), grant);
        scheduleHorizon(grant);
    }

    static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the lock client is closed");
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
        if (isClosed()) {
            return;
        }
        nodes.delete(path).whenComplete((v, error) -> {
            if (error != null) {
                log.debug("background delete of {} not confirmed yet; Curator keeps trying while the session lives", path, error);
            }
        });
    }

    private void checkOpen() {
        if (isClosed()) {
            throw new LockException(LockException.Reason.CLOSED, "the ZooKeeper lock driver for " + servers + " is closed");
        }
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public String toString() {
        return "ZooKeeperDriver[" + servers + ", lost-on " + session.lostOn().name().toLowerCase(Locale.ROOT) + ", acl "
                + security.aclSetting() + (security.tls() ? ", TLS" : "") + "]";
    }
}
