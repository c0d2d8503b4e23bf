package dev.warden.examples.export;

import dev.warden.examples.support.Closer;
import dev.warden.examples.support.DurationConverter;
import dev.warden.examples.support.Interrupts;
import dev.warden.examples.support.LockEndpoints;
import dev.warden.examples.support.QuietLogging;
import dev.warden.examples.support.Servers;
import dev.warden.examples.support.SettingsFile;
import dev.warden.examples.support.SetupException;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.apache.zookeeper.ZooKeeper;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The seed's long reconciliation export: a job that runs for several times its lock's TTL while
 * the lease keeper renews the lease every TTL/3, and that stops its work at once when the lease is
 * lost: the {@code onLost} listener cancels the batch in hand, and every batch starts only after
 * {@code lease.isValid()} said yes.
 *
 * <p>{@code --lose-after 3s} takes the lock away behind the job's back ({@code --loss delete}
 * deletes the lock's key or node, as an operator or a failover might; {@code --loss pause} freezes
 * the embedded server, as a stalled host would), so the stop can be watched.
 */
@Command(name = "export-job", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        version = "Warden export job example 0.1.0-SNAPSHOT",
        description = {
            "A long reconciliation export under one lock: it runs for several times the lock's TTL while the lease"
                    + " keeper renews the lease, printing each batch and the lease's remaining validity, and it stops"
                    + " at once when the lease is lost (the onLost listener cancels the batch in hand; no batch starts"
                    + " without lease.isValid()).",
            "Servers are embedded unless a flag or the settings file names one (etcd needs the etcd binary:"
                    + " Debian/Ubuntu package etcd-server).",
            ""},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the export completed, or stopped promptly after the loss --lose-after caused",
            "1:the lease was lost although nothing was done to it; the export is incomplete",
            "2:usage error",
            "3:a server could not be started or reached"},
        footerHeading = "%nExamples:%n",
        footer = {
            "  export-job                                 8 s under a 2 s TTL, on Redis",
            "  export-job --lock etcd --lose-after 3s     the key is deleted at 3 s; the job stops",
            "  export-job --lock zookeeper --lose-after 3s --loss pause"})
public final class ExportJob implements Callable<Integer> {

    /** How the job ended. */
    public record Summary(String backend, long fencingToken, int batches, int written, boolean completed, Duration ttl,
                          Duration held, long renewals, Optional<LostReason> lostReason, boolean lossInjected,
                          boolean batchStartedAfterLoss, boolean batchAbandoned, Optional<ReleaseOutcome> release) {

        /** Held for this many TTLs. */
        public double ttlsHeld() {
            return held.toMillis() / (double) ttl.toMillis();
        }
    }

    /** What {@link #execute} returns. */
    public record Result(int exitCode, Optional<Summary> summary) {
    }

    /** How {@code --lose-after} takes the lock away. */
    public enum Loss {
        /** Delete the lock's key (Redis, etcd) or node (ZooKeeper) behind the job's back. */
        DELETE,
        /** Freeze the embedded server (SIGSTOP) until the job has stopped. */
        PAUSE
    }

    static final String LOCK_NAME = "reconciliation-export";

    @Spec
    CommandSpec spec;

    @Option(names = "--lock", paramLabel = "KIND", description = "redis, etcd or zookeeper (default: redis, or the settings"
            + " file's warden.lock.backend).")
    String lock;

    @Option(names = "--config", paramLabel = "FILE", description = "Settings file with warden.lock.* settings; flags"
            + " override it.")
    Path config;

    @Option(names = "--ttl", paramLabel = "TIME", defaultValue = "2s", converter = DurationConverter.class,
            description = "The lease's TTL; the keeper renews every TTL/3 (default: ${DEFAULT-VALUE}; etcd needs whole"
                    + " seconds, at least 2s).")
    Duration ttl;

    @Option(names = {"-d", "--duration"}, paramLabel = "TIME", defaultValue = "8s", converter = DurationConverter.class,
            description = "How long the export runs when nothing goes wrong (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--batches", paramLabel = "N", defaultValue = "16",
            description = "Batches the export writes, evenly over the duration (default: ${DEFAULT-VALUE}).")
    int batches;

    @Option(names = "--lose-after", paramLabel = "TIME", converter = DurationConverter.class,
            description = "Take the lock away this long after it was acquired, to watch the job stop.")
    Duration loseAfter;

    @Option(names = "--loss", paramLabel = "HOW", defaultValue = "delete",
            description = "delete (the lock's key or node, behind the job's back) or pause (freeze the embedded server"
                    + " until the job stopped) (default: ${DEFAULT-VALUE}).")
    Loss loss;

    @Option(names = "--redis", paramLabel = "URI", description = "Redis for --lock redis, as redis://host:port.")
    String redis;

    @Option(names = "--etcd", paramLabel = "ENDPOINTS", description = "etcd for --lock etcd, as etcd://host:port.")
    String etcd;

    @Option(names = "--zookeeper", paramLabel = "ENDPOINTS", description = "ZooKeeper for --lock zookeeper, as"
            + " zookeeper://host:port.")
    String zookeeper;

    private PrintStream out = System.out;
    private PrintStream err = System.err;
    private final Closer closer = new Closer();
    private volatile Summary summary;
    private volatile long acquiredAt;
    private volatile Servers servers;

    public static void main(String[] args) {
        ExportJob job = new ExportJob();
        Interrupts.quitQuietly("export-job", () -> {
            Servers s = job.servers;
            if (s != null) {
                s.stopAll();
            }
        });
        System.exit(job.run(args, System.out, System.err).exitCode());
    }

    /** Runs the job in this process and returns instead of exiting. */
    public static Result execute(String[] args, PrintStream out, PrintStream err) {
        return new ExportJob().run(args, out, err);
    }

    private Result run(String[] args, PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
        QuietLogging.apply();
        CommandLine cli = new CommandLine(this)
                .setCaseInsensitiveEnumValuesAllowed(true)
                .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
                .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setParameterExceptionHandler((e, given) -> {
            err.println("export-job: " + e.getMessage());
            err.println("Try 'export-job --help' for the options.");
            return 2;
        });
        int code = cli.execute(args);
        return new Result(code, Optional.ofNullable(summary));
    }

    @Override
    public Integer call() throws Exception {
        Map<String, String> settings = config == null ? new LinkedHashMap<>() : new LinkedHashMap<>(SettingsFile.load(config));
        String backend = LockEndpoints.backend(lock, settings);
        if (!List.of(LockEndpoints.BACKENDS).contains(backend)) {
            throw new ParameterException(spec.commandLine(), "the lock '" + backend + "' is not one of redis, etcd, zookeeper");
        }
        if (batches < 1 || duration.isZero() || ttl.isZero()) {
            throw new ParameterException(spec.commandLine(), "--batches, --duration and --ttl must be positive");
        }
        try {
            return job(settings, backend);
        } catch (SetupException e) {
            err.println("export-job: " + e.getMessage());
            return 3;
        } catch (LockException e) {
            err.println("export-job: " + e.getMessage());
            return e.reason() == LockException.Reason.CONFIGURATION ? 2 : 3;
        } finally {
            closer.close();
        }
    }

    private int job(Map<String, String> settings, String backend) throws Exception {
        out.printf("Reconciliation export: %d batches over %s under the lock '%s' (%s, TTL %s; the lease keeper renews"
                + " every %s)%n", batches, DurationConverter.show(duration), LOCK_NAME, backend, DurationConverter.show(ttl),
                DurationConverter.show(ttl.dividedBy(3)));
        Servers servers = new Servers(closer, out);
        this.servers = servers;
        String flag = switch (backend) {
            case "redis" -> redis;
            case "etcd" -> etcd;
            default -> zookeeper;
        };
        String endpoints = LockEndpoints.resolve(settings, backend, flag, servers);
        settings.put("warden.lock.ttl", ttl.toMillis() + "ms");
        String namespace = settings.getOrDefault("warden.lock.namespace", "warden");
        Runnable takeAway = null;
        Runnable giveBack = () -> { };
        if (loseAfter != null) {
            if (loss == Loss.DELETE) {
                takeAway = deleter(backend, endpoints, namespace, servers);
            } else {
                takeAway = pauser(backend, servers);
                giveBack = resumer(backend, servers);
            }
        }

        AtomicLong renewals = new AtomicLong();
        LockClient client = closer.add("the lock client", LockClient.create(settings, new LockObserver() {
            @Override
            public void renewed(String name, long fencingToken, Duration remaining) {
                renewals.incrementAndGet();
            }
        }));
        DistributedLock exportLock = client.lock(LOCK_NAME);
        Lease lease = exportLock.tryAcquire(Duration.ofSeconds(10)).orElseThrow(() -> new SetupException(
                "the lock '" + LOCK_NAME + "' was not free within 10 s: another export is running"));
        long acquired = System.nanoTime();
        acquiredAt = acquired;
        out.printf("  %-10s fencing token %d; lease valid for %s%n", "acquired", lease.fencingToken(),
                DurationConverter.show(lease.remaining()));

        // The listener cancels the batch in hand: it interrupts the job's thread while the job works.
        Thread worker = Thread.currentThread();
        Object guard = new Object();
        boolean[] working = {true};
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        AtomicLong lostAt = new AtomicLong();
        lease.onLost(event -> {
            lostAt.set(System.nanoTime());
            lost.set(event);
            out.printf("  %-10s %s: the lease is lost (%s): cancelling the export%n", "LOST",
                    since(acquired), event.reason());
            synchronized (guard) {
                if (working[0]) {
                    worker.interrupt();
                }
            }
        });

        ScheduledExecutorService chaos = null;
        AtomicLong injectedAt = new AtomicLong();
        if (takeAway != null) {
            chaos = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "export-job-chaos");
                t.setDaemon(true);
                return t;
            });
            Runnable action = takeAway;
            chaos.schedule(() -> {
                injectedAt.set(System.nanoTime());
                try {
                    action.run();
                } catch (RuntimeException e) {
                    err.println("export-job: could not take the lock away: " + e);
                }
            }, loseAfter.toMillis(), TimeUnit.MILLISECONDS);
        }

        long step = duration.toNanos() / batches;
        int written = 0;
        boolean startedAfterLoss = false;
        boolean abandoned = false;
        try {
            for (int i = 1; i <= batches; i++) {
                long checkedAt = System.nanoTime();
                if (!lease.isValid()) {
                    break;
                }
                // The lease turns invalid before its listeners are told, so this never happens.
                if (lost.get() != null && checkedAt - lostAt.get() > 0) {
                    startedAfterLoss = true;
                }
                try {
                    writeBatch(step);
                } catch (InterruptedException e) {
                    abandoned = true;
                    out.printf("  %-10s batch %d/%d abandoned mid-write: the lease was lost%n", "stopped", i, batches);
                    break;
                }
                written++;
                out.printf("  %-10s %2d/%d written   %s held (%.1f × TTL)   lease valid %s more   renewals: %d%n",
                        "batch", i, batches, since(acquired), (System.nanoTime() - acquired) / (double) ttl.toNanos(),
                        DurationConverter.show(lease.remaining()), renewals.get());
            }
        } finally {
            synchronized (guard) {
                working[0] = false;
            }
            Thread.interrupted();
            if (chaos != null) {
                chaos.shutdownNow();
            }
        }
        long stoppedAt = System.nanoTime();
        Duration held = Duration.ofNanos((lost.get() != null ? lostAt.get() : stoppedAt) - acquired);
        giveBack.run();
        ReleaseOutcome release = null;
        try {
            release = lease.release();
        } catch (LockException e) {
            err.println("export-job: the release was not confirmed (" + e.getMessage() + "); the lock expires after its TTL");
        }
        boolean completed = written == batches;
        LeaseLost event = lost.get();
        summary = new Summary(backend, lease.fencingToken(), batches, written, completed, ttl, held, renewals.get(),
                Optional.ofNullable(event).map(LeaseLost::reason), injectedAt.get() != 0, startedAfterLoss, abandoned,
                Optional.ofNullable(release));

        out.println();
        if (completed) {
            out.printf("Done: %d of %d batches written in %s = %.1f × the TTL, on one lease (token %d) renewed %d times;"
                    + " release: %s.%n", written, batches, since(acquired), summary.ttlsHeld(), lease.fencingToken(),
                    renewals.get(), release);
            return 0;
        }
        out.printf("Stopped: %d of %d batches written; the rest were not, because the job no longer held the lock.%n",
                written, batches);
        if (event != null) {
            out.printf("  lost %s after acquiring (%s)%s; the job stopped %s after it was told; release: %s%s.%n",
                    DurationConverter.show(held), event.reason(), injectedAt.get() != 0 ? ", "
                            + DurationConverter.show(Duration.ofNanos(lostAt.get() - injectedAt.get()))
                            + " after the lock was taken away" : "",
                    DurationConverter.show(Duration.ofNanos(Math.max(0, stoppedAt - lostAt.get()))), release,
                    release == ReleaseOutcome.LOST ? " (whoever holds the lock now was not touched)" : "");
        }
        return injectedAt.get() != 0 ? 0 : 1;
    }

    /** One batch of the export: here, time passing; interruptible, as real I/O should be. */
    private static void writeBatch(long nanos) throws InterruptedException {
        TimeUnit.NANOSECONDS.sleep(nanos);
    }

    private String since(long start) {
        return String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - start) / 1e9);
    }

    // ---- taking the lock away ----

    private Runnable deleter(String backend, String endpoints, String namespace, Servers servers) {
        return switch (backend) {
            case "redis" -> () -> {
                String key = "{" + namespace + ":" + LOCK_NAME + "}:lock";
                RedisClient redisClient = RedisClient.create(endpoints.split(",")[0].trim());
                try (StatefulRedisConnection<String, String> c = redisClient.connect()) {
                    long n = c.sync().del(key);
                    out.printf("  %-10s %s: deleted the lock's key %s behind the job's back (%d key)%n", "[chaos]", since(acquiredAt), key, n);
                } finally {
                    redisClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                }
            };
            case "etcd" -> {
                var server = servers.etcdServer().orElseThrow(() -> new ParameterException(spec.commandLine(),
                        "--lose-after with --loss delete on etcd needs the embedded etcd (leave out --etcd)"));
                yield () -> {
                    String prefix = namespace + "/" + LOCK_NAME + "/";
                    long n = server.deletePrefix(prefix);
                    out.printf("  %-10s %s: deleted the lock's key under %s behind the job's back (%d key)%n", "[chaos]", since(acquiredAt), prefix, n);
                };
            }
            default -> () -> {
                String path = "/" + namespace + "/" + LOCK_NAME;
                int n = deleteChildren(endpoints, path);
                out.printf("  %-10s %s: deleted the lock's node under %s behind the job's back (%d node)%n", "[chaos]", since(acquiredAt), path, n);
            };
        };
    }

    private static int deleteChildren(String endpoints, String path) {
        StringBuilder connect = new StringBuilder();
        for (String e : endpoints.split(",")) {
            if (connect.length() > 0) {
                connect.append(',');
            }
            connect.append(e.trim().replaceFirst("^zookeeper://", ""));
        }
        CountDownLatch connected = new CountDownLatch(1);
        try {
            ZooKeeper zk = new ZooKeeper(connect.toString(), 10_000, event -> {
                if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected) {
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

    private Runnable pauser(String backend, Servers servers) {
        String needs = "--loss pause needs the embedded server (leave out --" + backend + " and the settings file's endpoints)";
        return switch (backend) {
            case "redis" -> {
                var s = servers.redisServer().orElseThrow(() -> new ParameterException(spec.commandLine(), needs));
                yield () -> {
                    s.pause();
                    out.printf("  %-10s %s: froze the Redis server (SIGSTOP)%n", "[chaos]", since(acquiredAt));
                };
            }
            case "etcd" -> {
                var s = servers.etcdServer().orElseThrow(() -> new ParameterException(spec.commandLine(), needs));
                yield () -> {
                    s.pause();
                    out.printf("  %-10s %s: froze the etcd server (SIGSTOP)%n", "[chaos]", since(acquiredAt));
                };
            }
            default -> {
                var s = servers.zookeeperServer().orElseThrow(() -> new ParameterException(spec.commandLine(), needs));
                yield () -> {
                    s.pause();
                    out.printf("  %-10s %s: froze the ZooKeeper server (SIGSTOP)%n", "[chaos]", since(acquiredAt));
                };
            }
        };
    }

    private Runnable resumer(String backend, Servers servers) {
        return () -> {
            switch (backend) {
                case "redis" -> servers.redisServer().filter(s -> s.isPaused()).ifPresent(s -> s.resume());
                case "etcd" -> servers.etcdServer().filter(s -> s.isPaused()).ifPresent(s -> s.resume());
                default -> servers.zookeeperServer().filter(s -> s.isPaused()).ifPresent(s -> s.resume());
            }
        };
    }
}
