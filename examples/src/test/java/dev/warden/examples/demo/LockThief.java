package dev.warden.examples.demo;

import dev.warden.examples.demo.support.Servers;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.ZooKeeperServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

import java.io.PrintStream;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * The export job demo's {@code --lose-after}: takes the job's lock away behind its back, as an
 * operator, a failover or a stalled host would. {@code delete} removes the lock's key (Redis, etcd)
 * or node (ZooKeeper) with a client of its own; {@code pause} freezes the embedded server (SIGSTOP)
 * until {@link #giveBack} resumes it.
 */
final class LockThief {

    /** How the lock is taken away. */
    enum Loss {
        /** Delete the lock's key (Redis, etcd) or node (ZooKeeper) behind the job's back. */
        DELETE,
        /** Freeze the embedded server (SIGSTOP) until the job has stopped. */
        PAUSE
    }

    private final Runnable takeAway;
    private final Runnable giveBack;

    private LockThief(Runnable takeAway, Runnable giveBack) {
        this.takeAway = takeAway;
        this.giveBack = giveBack;
    }

    /**
     * @param sinceMillis the time since the lock was acquired, for the printed lines
     * @throws IllegalArgumentException when the loss needs an embedded server that was not started
     */
    static LockThief of(Loss loss, String backend, String endpoints, String namespace, String lockName, Servers servers,
                        PrintStream out, LongSupplier sinceMillis) {
        String needs = "--loss " + loss.name().toLowerCase(Locale.ROOT) + " on " + backend
                + " needs the embedded server (leave out --" + backend + " and the settings file's endpoints)";
        Runnable none = () -> { };
        String at = "  %-10s %.1f s: ";
        if (loss == Loss.PAUSE) {
            return switch (backend) {
                case "redis" -> {
                    RedisServer s = servers.redisServer().orElseThrow(() -> new IllegalArgumentException(needs));
                    yield freezer("Redis", s::pause, s::isPaused, s::resume, out, sinceMillis);
                }
                case "etcd" -> {
                    EtcdServer s = servers.etcdServer().orElseThrow(() -> new IllegalArgumentException(needs));
                    yield freezer("etcd", s::pause, s::isPaused, s::resume, out, sinceMillis);
                }
                default -> {
                    ZooKeeperServer s = servers.zookeeperServer().orElseThrow(() -> new IllegalArgumentException(needs));
                    yield freezer("ZooKeeper", s::pause, s::isPaused, s::resume, out, sinceMillis);
                }
            };
        }
        return switch (backend) {
            case "redis" -> new LockThief(() -> {
                String key = "{" + namespace + ":" + lockName + "}:lock";
                long n = deleteRedisKey(endpoints.split(",")[0].trim(), key);
                out.printf(Locale.ROOT, at + "deleted the lock's key %s behind the job's back (%d key)%n", "[chaos]",
                        sinceMillis.getAsLong() / 1e3, key, n);
            }, none);
            case "etcd" -> {
                EtcdServer s = servers.etcdServer().orElseThrow(() -> new IllegalArgumentException(
                        "--lose-after with --loss delete on etcd needs the embedded etcd (leave out --etcd)"));
                yield new LockThief(() -> {
                    String prefix = namespace + "/" + lockName + "/";
                    long n = s.deletePrefix(prefix);
                    out.printf(Locale.ROOT, at + "deleted the lock's key under %s behind the job's back (%d key)%n", "[chaos]",
                            sinceMillis.getAsLong() / 1e3, prefix, n);
                }, none);
            }
            default -> new LockThief(() -> {
                String path = "/" + namespace + "/" + lockName;
                int n = deleteChildren(endpoints, path);
                out.printf(Locale.ROOT, at + "deleted the lock's node under %s behind the job's back (%d node)%n", "[chaos]",
                        sinceMillis.getAsLong() / 1e3, path, n);
            }, none);
        };
    }

    private static LockThief freezer(String server, Runnable pause, BooleanSupplier paused, Runnable resume, PrintStream out,
                                     LongSupplier sinceMillis) {
        return new LockThief(() -> {
            pause.run();
            out.printf(Locale.ROOT, "  %-10s %.1f s: froze the %s server (SIGSTOP)%n", "[chaos]", sinceMillis.getAsLong() / 1e3, server);
        }, () -> {
            if (paused.getAsBoolean()) {
                resume.run();
            }
        });
    }

    /** Takes the lock away now. */
    void takeAway() {
        takeAway.run();
    }

    /** Resumes a frozen server; idempotent, and nothing for a deletion. */
    void giveBack() {
        giveBack.run();
    }

    private static long deleteRedisKey(String uri, String key) {
        RedisClient client = RedisClient.create(uri);
        try (StatefulRedisConnection<String, String> c = client.connect()) {
            return c.sync().del(key);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        }
    }

    private static int deleteChildren(String endpoints, String path) {
        StringBuilder connect = new StringBuilder();
        for (String e : endpoints.split(",")) {
            connect.append(connect.length() > 0 ? "," : "").append(e.trim().replaceFirst("^zookeeper://", ""));
        }
        CountDownLatch connected = new CountDownLatch(1);
        try {
            ZooKeeper zk = new ZooKeeper(connect.toString(), 10_000, event -> {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
            try {
                if (!connected.await(10, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("could not connect to ZooKeeper at " + connect);
                }
                int n = 0;
                for (String child : zk.getChildren(path, false)) {
                    zk.delete(path + "/" + child, -1);
                    n++;
                }
                return n;
            } finally {
                zk.close();
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw new IllegalStateException("could not delete the lock's node: " + e, e);
        }
    }
}
