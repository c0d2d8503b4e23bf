package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.LockConfig;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.zookeeper.client.ZKClientConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The ZooKeeper driver's lifecycle: its one thread and its Curator client, built with the TTL as
 * the session timeout and a ZooKeeper configuration of its own; the first connection and the check
 * of the session the servers granted; and at close, the end of the session (ZooKeeper deletes its
 * nodes) and of every thread the driver started. {@link ZooKeeperDriver} opens and closes it.
 *
 * <p>Concurrency: every field is final; Curator and the executor are thread-safe.
 */
final class Lifecycle {

    // The driver's category, as before this class was split from it: log settings naming it still apply.
    private static final Logger log = LoggerFactory.getLogger(ZooKeeperDriver.class);
    private static final AtomicInteger DRIVERS = new AtomicInteger();
    private static final int SHUTDOWN_WAIT_MS = 2_000;
    private static final int RETRY_SLEEP_MS = 50;

    private final CuratorFramework curator;
    private final ScheduledThreadPoolExecutor executor;
    private final Security security;
    private final String servers;

    private Lifecycle(CuratorFramework curator, ScheduledThreadPoolExecutor executor, Security security, String servers) {
        this.curator = curator;
        this.executor = executor;
        this.security = security;
        this.servers = servers;
    }

    /** The driver's thread and its Curator client for {@code servers}, not started yet. */
    static Lifecycle build(LockConfig config, String servers) {
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
                // timeout itself is enforced in connect(). Capped by the session, which Curator expects.
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
        return new Lifecycle(curator, executor, security, servers);
    }

    CuratorFramework curator() {
        return curator;
    }

    ScheduledThreadPoolExecutor executor() {
        return executor;
    }

    Security security() {
        return security;
    }

    /** Tells {@code session} every connection state, on the driver's thread, in between the decisions of {@code calls}. */
    void listen(ZooKeeperSession session, Calls calls) {
        curator.getConnectionStateListenable().addListener((client, state) -> calls.inOrder(() -> session.stateChanged(state)),
                executor);
    }

    /**
     * Starts the client, connects within the connect timeout and checks the session the servers
     * granted; protects the namespace's node when the nodes are protected.
     *
     * @throws LockException {@code UNAVAILABLE} when no server answers in time; {@code CONFIGURATION}
     *         when the servers cap the session below the TTL (a lease would outlive its session)
     */
    void connect(ZooKeeperSession session, LockConfig config) throws Exception {
        int ttlMillis = (int) config.ttl().toMillis();
        int connectMillis = (int) Math.max(1, config.connectTimeout().toMillis());
        curator.start();
        try {
            session.firstConnected().get(connectMillis, TimeUnit.MILLISECONDS);
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
    }

    /** The ZooKeeper handle of the moment. */
    org.apache.zookeeper.ZooKeeper zooKeeper() throws Exception {
        return curator.getZookeeperClient().getZooKeeper();
    }

    /** Closes the session (ZooKeeper deletes its nodes) and ends every thread the driver started. */
    void close() {
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

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
