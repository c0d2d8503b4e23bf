package dev.warden.examples.demo;

import dev.warden.examples.demo.support.Closer;
import dev.warden.examples.demo.support.DurationConverter;
import dev.warden.examples.demo.support.Interrupts;
import dev.warden.examples.demo.support.LockEndpoints;
import dev.warden.examples.demo.support.QuietLogging;
import dev.warden.examples.demo.support.Servers;
import dev.warden.examples.demo.support.SettingsFile;
import dev.warden.examples.demo.support.SetupException;
import dev.warden.examples.export.ExportJob;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code ./demo.sh export-job}: runs the copyable {@link ExportJob} on an embedded server (unless a flag
 * or the settings file names one) under a short TTL, and with {@code --lose-after} takes the lock away
 * behind its back ({@link LockThief}), so the stop can be watched and checked: no batch starts after the
 * loss, and the exit code says whether the job behaved.
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
public final class ExportJobDemo implements Callable<Integer> {

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
    LockThief.Loss loss;

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
    private volatile Servers servers;

    public static void main(String[] args) {
        ExportJobDemo demo = new ExportJobDemo();
        Interrupts.quitQuietly("export-job", () -> {
            Servers s = demo.servers;
            if (s != null) {
                s.stopAll();
            }
        });
        System.exit(demo.run(args, System.out, System.err).exitCode());
    }

    /** Runs the job in this process and returns instead of exiting. */
    public static Result execute(String[] args, PrintStream out, PrintStream err) {
        return new ExportJobDemo().run(args, out, err);
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

    private int job(Map<String, String> settings, String backend) {
        out.printf("Reconciliation export: %d batches over %s under the lock '%s' (%s, TTL %s; the lease keeper renews"
                + " every %s)%n", batches, DurationConverter.show(duration), ExportJob.LOCK_NAME, backend,
                DurationConverter.show(ttl), DurationConverter.show(ttl.dividedBy(3)));
        Servers servers = new Servers(closer, out);
        this.servers = servers;
        String flag = switch (backend) {
            case "redis" -> redis;
            case "etcd" -> etcd;
            default -> zookeeper;
        };
        String endpoints = LockEndpoints.resolve(settings, backend, flag, servers);
        settings.put("warden.lock.ttl", ttl.toMillis() + "ms");
        AtomicLong acquiredAt = new AtomicLong();
        LockThief thief = null;
        if (loseAfter != null) {
            try {
                thief = LockThief.of(loss, backend, endpoints, settings.getOrDefault("warden.lock.namespace", "warden"),
                        ExportJob.LOCK_NAME, servers, out, () -> (System.nanoTime() - acquiredAt.get()) / 1_000_000);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(spec.commandLine(), e.getMessage());
            }
        }

        // The job is the client's observer: it counts the lease keeper's renewals.
        ExportJob job = new ExportJob(out);
        LockClient client = closer.add("the lock client", LockClient.create(settings, job));
        Lease lease = client.lock(ExportJob.LOCK_NAME).tryAcquire(Duration.ofSeconds(10)).orElseThrow(() ->
                new SetupException("the lock '" + ExportJob.LOCK_NAME + "' was not free within 10 s: another export is running"));
        acquiredAt.set(System.nanoTime());

        ScheduledExecutorService chaos = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "export-job-chaos");
            t.setDaemon(true);
            return t;
        });
        AtomicLong injectedAt = new AtomicLong();
        ExportJob.Result r;
        try {
            if (thief != null) {
                LockThief t = thief;
                chaos.schedule(() -> {
                    injectedAt.set(System.nanoTime());
                    try {
                        t.takeAway();
                    } catch (RuntimeException e) {
                        err.println("export-job: could not take the lock away: " + e);
                    }
                }, loseAfter.toMillis(), TimeUnit.MILLISECONDS);
                // A frozen server thaws once the loss is seen, so the job's release gets an answer.
                lease.onLost(lost -> {
                    try {
                        chaos.execute(t::giveBack);
                    } catch (RejectedExecutionException stopped) {
                        // The job is over: the finally below thaws it.
                    }
                });
            }
            r = job.export(lease, batches, duration.dividedBy(batches));
        } finally {
            chaos.shutdownNow();
            if (thief != null) {
                thief.giveBack();
            }
        }

        boolean injected = injectedAt.get() != 0;
        long heldUntil = r.lost().isPresent() ? r.lostAt() : r.stoppedAt();
        Duration held = Duration.ofNanos(heldUntil - r.acquiredAt());
        boolean startedAfterLoss = r.lost().isPresent() && r.lastBatchStartedAt() != 0
                && r.lastBatchStartedAt() - r.lostAt() > 0;
        summary = new Summary(backend, r.fencingToken(), batches, r.written(), r.completed(), ttl, held, job.renewals(),
                r.lost().map(LeaseLost::reason), injected, startedAfterLoss, r.abandoned(), r.release());
        if (r.completed()) {
            out.printf("  held %.1f × the TTL of %s on one lease, kept alive by the lease keeper.%n", summary.ttlsHeld(),
                    DurationConverter.show(ttl));
            return 0;
        }
        r.lost().ifPresent(event -> out.printf("  lost %s after acquiring (%s)%s; the job stopped %s after it was told%s.%n",
                DurationConverter.show(held), event.reason(), injected ? ", " + DurationConverter.show(
                        Duration.ofNanos(r.lostAt() - injectedAt.get())) + " after the lock was taken away" : "",
                DurationConverter.show(Duration.ofNanos(Math.max(0, r.stoppedAt() - r.lostAt()))),
                r.release().filter(o -> o == ReleaseOutcome.LOST).isPresent()
                        ? "; release LOST: whoever holds the lock now was not touched" : ""));
        if (startedAfterLoss) {
            out.println("  A BATCH STARTED AFTER THE LOSS WAS REPORTED.");
            return 1;
        }
        return injected ? 0 : 1;
    }
}
