package dev.warden.examples.demo.support;

import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.ZooKeeperServer;

import java.io.PrintStream;
import java.util.Optional;

/**
 * The embedded servers of the examples' defaults, started on first use from testkit on free
 * loopback ports in temporary directories, and stopped by the {@link Closer}: Redis from the local
 * {@code redis-server}, etcd from the local {@code etcd} binary, ZooKeeper as a child JVM from
 * ZooKeeper's own jar.
 */
public final class Servers {

    /** How to get etcd, for every message that needs it. */
    public static final String ETCD_HINT = "the etcd lock needs the 'etcd' binary on PATH to launch an embedded etcd"
            + " (Debian/Ubuntu: sudo apt-get install -y etcd-server), or --etcd etcd://host:2379 for a running cluster";
    public static final String REDIS_HINT = "the demo needs the 'redis-server' binary on PATH to launch an embedded"
            + " Redis (Debian/Ubuntu: sudo apt-get install -y redis-server), or --redis redis://host:6379 for a running server";

    private final Closer closer;
    private final PrintStream out;
    private RedisServer redis;
    private EtcdServer etcd;
    private ZooKeeperServer zookeeper;
    private PostgresServer postgres;

    public Servers(Closer closer, PrintStream out) {
        this.closer = closer;
        this.out = out;
    }

    /** Starts (once) an embedded Redis; returns its {@code redis://} URI. */
    public synchronized String redis() {
        if (redis == null) {
            try {
                redis = closer.add("the embedded Redis", RedisServer.start());
            } catch (IllegalStateException e) {
                throw new SetupException(REDIS_HINT + " (" + e.getMessage() + ")", e);
            }
            out.printf("  %-10s embedded redis-server on %s%n", "redis", redis.uri());
        }
        return redis.uri();
    }

    /** Starts (once) an embedded etcd; returns Warden's endpoints setting for it. */
    public synchronized String etcd() {
        if (etcd == null) {
            try {
                etcd = closer.add("the embedded etcd", EtcdServer.start());
            } catch (IllegalStateException e) {
                throw new SetupException(ETCD_HINT + ".\n  (" + e.getMessage() + ")", e);
            }
            out.printf("  %-10s embedded etcd on %s%n", "etcd", etcd.endpoints());
        }
        return etcd.endpoints();
    }

    /** Starts (once) an embedded ZooKeeper; returns Warden's endpoints setting for it. */
    public synchronized String zookeeper() {
        if (zookeeper == null) {
            try {
                zookeeper = closer.add("the embedded ZooKeeper", ZooKeeperServer.start());
            } catch (IllegalStateException e) {
                throw new SetupException("could not launch an embedded ZooKeeper: " + e.getMessage()
                        + " (or pass --zookeeper zookeeper://host:2181 for a running server)", e);
            }
            out.printf("  %-10s embedded ZooKeeper on %s%n", "zookeeper", zookeeper.endpoint());
        }
        return zookeeper.endpoint();
    }

    /**
     * Starts (once) an embedded PostgreSQL; returns its {@code jdbc:postgresql://} URL and puts its user in
     * {@code settings} ({@code warden.lock.jdbc.username}), since a URL carries no login.
     */
    public synchronized String postgres(java.util.Map<String, String> settings) {
        if (postgres == null) {
            try {
                postgres = closer.add("the embedded PostgreSQL", PostgresServer.start());
            } catch (IllegalStateException e) {
                throw new SetupException("could not launch an embedded PostgreSQL: " + e.getMessage(), e);
            }
            out.printf("  %-10s embedded PostgreSQL on %s:%d%n", "jdbc", postgres.host(), postgres.port());
        }
        settings.put("warden.lock.jdbc.username", postgres.user());
        return "jdbc:postgresql://" + postgres.host() + ":" + postgres.port() + "/" + postgres.database();
    }

    /** Stops every server started here, at once (for Ctrl-C; the {@link Closer} does it in order otherwise). */
    public void stopAll() {
        RedisServer r;
        EtcdServer e;
        ZooKeeperServer z;
        PostgresServer p;
        synchronized (this) {
            p = postgres;
            r = redis;
            e = etcd;
            z = zookeeper;
        }
        for (AutoCloseable server : new AutoCloseable[] {p, z, e, r}) {
            if (server != null) {
                try {
                    server.close();
                } catch (Exception ignored) {
                    // Exiting: the server's own exit hook tries again.
                }
            }
        }
    }

    /** The embedded Redis, when one was started. */
    public synchronized Optional<RedisServer> redisServer() {
        return Optional.ofNullable(redis);
    }

    /** The embedded etcd, when one was started. */
    public synchronized Optional<EtcdServer> etcdServer() {
        return Optional.ofNullable(etcd);
    }

    /** The embedded ZooKeeper, when one was started. */
    public synchronized Optional<ZooKeeperServer> zookeeperServer() {
        return Optional.ofNullable(zookeeper);
    }
}
