package dev.warden.examples.demo;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.examples.demo.support.Closer;
import dev.warden.examples.demo.support.DurationConverter;
import dev.warden.examples.demo.support.Interrupts;
import dev.warden.examples.demo.support.LedgerDatabase;
import dev.warden.examples.demo.support.LockEndpoints;
import dev.warden.examples.demo.support.QuietLogging;
import dev.warden.examples.demo.support.Servers;
import dev.warden.examples.demo.support.SettingsFile;
import dev.warden.examples.demo.support.SetupException;
import dev.warden.examples.ledger.LedgerSync;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * The billing demo, a test harness: the seed's scenario end to end in one process, run with
 * {@code ./demo.sh} from the repository root ({@code --help} lists the flags). It launches the servers
 * (testkit), charges from three channels ({@link Load}) with the pricing of the copyable
 * {@code ChargeMerchant}, drains and reconciles with the copyable {@code LedgerSync}'s steps, and has
 * {@link Invariants} check that the money stayed right.
 *
 * <p>{@link #main} exits with the code; {@link #execute} returns it with the {@link Report}, for
 * tests and other callers that must not exit.
 */
@Command(name = "billing-demo", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        version = "Warden billing demo 0.1.0-SNAPSHOT",
        description = {
            "The web, mini-program and OpenAPI channels charge a set of merchants' plan quotas at once, for a given time.",
            "Each charge is QuotaService.charge: take the merchant's lock (unless --lock none), read the balance, price"
                    + " (the channel's list price, or what is left of the plan), deduct with the lease's fencing token in"
                    + " one Redis Lua script, release. A journal consumer moves every deduction into the ledger database"
                    + " meanwhile; at the end the journal is drained, Redis and the ledger are reconciled, and the"
                    + " invariants are checked and printed as PASS or FAIL.",
            "",
            "Nothing needs to be set up: Redis (redis-server) and ZooKeeper are launched locally on free ports, etcd from"
                    + " the local etcd binary when it is chosen (Debian/Ubuntu package etcd-server), and the ledger is an"
                    + " H2 file. A flag or the settings file naming a server uses that one instead.",
            ""},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:every invariant held",
            "1:an invariant failed (the report says which)",
            "2:usage error",
            "3:a server or the ledger database could not be started or reached"},
        footerHeading = "%nExamples:%n",
        footer = {
            "  ./demo.sh                               10 s, Redis lock, everything embedded",
            "  ./demo.sh --lock etcd --duration 5s     the etcd lock (needs the etcd binary)",
            "  ./demo.sh --lock none --hot-share 0.9   no lock: stale prices refused, nothing lost",
            "  ./demo.sh --config my.properties        settings from a file; flags override",
            "  ./demo.sh --jdbc-url jdbc:postgresql://127.0.0.1:5432/warden \\",
            "            --jdbc-user warden                (password from $WARDEN_JDBC_PASSWORD)"})
public final class BillingDemo implements Callable<Integer> {

    /** The lock a charge takes. */
    public enum Lock {
        NONE, REDIS, ETCD, ZOOKEEPER;

        String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What {@link #execute} returns: the exit code, and the report when the demo got that far. */
    public record Result(int exitCode, Optional<Report> report) {
    }

    static final int INVARIANT_FAILED = 1;
    static final int USAGE = 2;
    static final int SETUP = 3;
    private static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(60);
    private static final String ACCOUNT_PREFIX = "demo-";

    @Spec
    CommandSpec spec;

    @Option(names = "--lock", paramLabel = "KIND",
            description = "none, redis, etcd or zookeeper: the merchant lock each charge takes (default: redis, or the"
                    + " settings file's warden.quota.lock).")
    Lock lock;

    @Option(names = "--config", paramLabel = "FILE",
            description = "Settings file (Java properties): warden.quota.* and warden.lock.* settings, as QuotaService"
                    + " and LockClient take them. Flags override it; an endpoint it names is used instead of an embedded"
                    + " server (lock endpoints only when their scheme is the chosen lock's).")
    Path config;

    @Option(names = {"-d", "--duration"}, paramLabel = "TIME", defaultValue = "10s", converter = DurationConverter.class,
            description = "How long the channels charge: 500ms, 10s, 2m, PT10S (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--merchants", paramLabel = "N", defaultValue = "20",
            description = "Merchants charged; the first, m00, is the hot one (default: ${DEFAULT-VALUE}).")
    int merchants;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "4",
            description = "Threads per channel, each charging one merchant after another (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = "--hot-share", paramLabel = "FRACTION", defaultValue = "0.3",
            description = "Fraction of all charges that go to the hot merchant m00; the rest are spread evenly over the"
                    + " others (default: ${DEFAULT-VALUE}).")
    double hotShare;

    @Option(names = "--initial-quota", paramLabel = "UNITS", defaultValue = "2000",
            description = "Each merchant's plan quota at the start. Charges cost 1-5 units; a plan that runs out refuses"
                    + " further charges as insufficient (default: ${DEFAULT-VALUE}).")
    long initialQuota;

    @Option(names = "--redis", paramLabel = "URI",
            description = "Redis holding the quotas and the redis lock, as redis://host:port (default: the settings"
                    + " file's warden.quota.endpoint, else a redis-server launched locally).")
    String redis;

    @Option(names = "--etcd", paramLabel = "ENDPOINTS",
            description = "etcd for --lock etcd, as etcd://host:port, comma-separated (default: the settings file's,"
                    + " else an etcd launched from the local binary).")
    String etcd;

    @Option(names = "--zookeeper", paramLabel = "ENDPOINTS",
            description = "ZooKeeper for --lock zookeeper, as zookeeper://host:port, comma-separated (default: the"
                    + " settings file's, else a ZooKeeper launched locally).")
    String zookeeper;

    @Option(names = "--jdbc-url", paramLabel = "URL",
            description = "The ledger database: PostgreSQL (jdbc:postgresql://host:port/db) or H2 (default: a fresh H2"
                    + " file database in examples/target/warden-demo or the temporary directory). The demo creates the"
                    + " ledger's tables if they are missing.")
    String jdbcUrl;

    @Option(names = "--jdbc-user", paramLabel = "USER", description = "Database user for --jdbc-url; the password comes from the environment variable"
            + " WARDEN_JDBC_PASSWORD, never from the command line.")
    String jdbcUser;


    @Option(names = "--progress", paramLabel = "MODE", defaultValue = "auto",
            description = "auto, bar, lines or off: the live line while charging; auto redraws one line on a terminal and"
                    + " prints a line a second otherwise (default: ${DEFAULT-VALUE}).")
    Progress.Mode progress;

    private PrintStream out = System.out;
    private PrintStream err = System.err;
    private final Closer closer = new Closer();
    private volatile Report report;
    private volatile Servers servers;

    /** Runs the demo and exits with its code (see {@code --help}). */
    public static void main(String[] args) {
        BillingDemo demo = new BillingDemo();
        Interrupts.quitQuietly("billing-demo", demo::stopServers);
        System.exit(demo.run(args, System.out, System.err).exitCode());
    }

    /** Runs the demo in this process and returns instead of exiting. */
    public static Result execute(String[] args, PrintStream out, PrintStream err) {
        return new BillingDemo().run(args, out, err);
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
            err.println("billing-demo: " + Redaction.redact(e.getMessage()));
            err.println("Try 'billing-demo --help' (./demo.sh --help) for the flags.");
            return USAGE;
        });
        int code = cli.execute(args);
        return new Result(code, Optional.ofNullable(report));
    }

    /** Ctrl-C: the servers this demo started stop now. */
    private void stopServers() {
        Servers s = servers;
        if (s != null) {
            s.stopAll();
        }
    }

    @Override
    public Integer call() throws Exception {
        validate();
        Map<String, String> settings = config == null ? new LinkedHashMap<>() : new LinkedHashMap<>(SettingsFile.load(config));
        Lock chosen = chosenLock(settings);
        try {
            return demo(settings, chosen);
        } catch (SetupException | QuotaException | LockException e) {
            err.println();
            err.println("billing-demo: " + Redaction.redact(e.getMessage()));
            boolean configuration = (e instanceof QuotaException q && q.reason() == QuotaException.Reason.CONFIGURATION)
                    || (e instanceof LockException l && l.reason() == LockException.Reason.CONFIGURATION);
            return configuration ? USAGE : SETUP;
        } finally {
            closer.close();
        }
    }

    private void validate() {
        List<String> problems = new ArrayList<>();
        if (duration.isZero()) {
            problems.add("--duration must be positive");
        }
        if (merchants < 1 || merchants > 100_000) {
            problems.add("--merchants must be 1..100000, was " + merchants);
        }
        if (threads < 1 || threads > 256) {
            problems.add("--threads must be 1..256, was " + threads);
        }
        if (!(hotShare >= 0 && hotShare <= 1)) {
            problems.add("--hot-share must be a fraction 0..1, was " + hotShare);
        }
        if (initialQuota < 1 || initialQuota > (1L << 53) - 1) {
            problems.add("--initial-quota must be 1..2^53-1, was " + initialQuota);
        }
        if (redis != null && !redis.startsWith("redis://") && !redis.startsWith("rediss://")) {
            problems.add("--redis must be a redis:// or rediss:// URI, was " + Redaction.redact(redis));
        }
        for (String[] flag : new String[][] {{"--redis", redis}, {"--jdbc-url", jdbcUrl}, {"--etcd", etcd}, {"--zookeeper", zookeeper}}) {
            if (flag[1] != null && !Redaction.redact(flag[1]).equals(flag[1])) {
                problems.add(flag[0] + " '" + Redaction.redact(flag[1]) + "' carries a password, which a command line shows to"
                        + " every user of the host: use --config with warden.quota.redis.password-file (or -env), or"
                        + " WARDEN_JDBC_PASSWORD for the database");
            }
        }
        if (config != null && !Files.isReadable(config)) {
            problems.add("--config " + config + " is not a readable file");
        }
        if (!problems.isEmpty()) {
            throw new ParameterException(spec.commandLine(), String.join("\nbilling-demo: ", problems));
        }
    }

    private Lock chosenLock(Map<String, String> settings) {
        if (lock != null) {
            return lock;
        }
        String v = settings.getOrDefault("warden.quota.lock", settings.get("warden.lock.backend"));
        if (v == null) {
            return Lock.REDIS;
        }
        try {
            return Lock.valueOf(v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), config + ": the lock '" + v
                    + "' is not one of none, redis, etcd, zookeeper");
        }
    }

    private int demo(Map<String, String> settings, Lock chosen) throws Exception {
        String runId = Long.toString(System.currentTimeMillis(), 36);
        out.printf("Warden billing demo: %s charging %d merchant%s for %s; %s%n", "web, mini-program and openapi",
                merchants, merchants == 1 ? "" : "s", DurationConverter.show(duration),
                chosen == Lock.NONE ? "no lock" : "each charge under the merchant's " + chosen.wire() + " lock");
        Servers servers = new Servers(closer, out);
        this.servers = servers;

        // Redis, for the quotas (flag, then settings file, then embedded).
        if (redis != null) {
            settings.put("warden.quota.endpoint", redis);
        } else if (!settings.containsKey("warden.quota.endpoint")) {
            settings.put("warden.quota.endpoint", servers.redis());
        }
        String quotaEndpoint = settings.get("warden.quota.endpoint");
        if (servers.redisServer().isEmpty()) {
            out.printf("  %-10s %s (%s)%n", "redis", Redaction.redact(quotaEndpoint), redis != null ? "--redis" : "from " + config);
        }

        // The lock: its settings from the file apply only when they are for the chosen backend.
        String fileEndpoints = settings.remove("warden.lock.endpoints");
        settings.remove("warden.lock.backend");
        settings.put("warden.quota.lock", chosen.wire());
        if (chosen != Lock.NONE) {
            settings.put("warden.lock.backend", chosen.wire());
            String endpoints = switch (chosen) {
                case REDIS -> redis != null ? redis : LockEndpoints.matching(fileEndpoints, "redis").orElse(quotaEndpoint);
                case ETCD -> etcd != null ? SettingsFile.withScheme("etcd", etcd)
                        : LockEndpoints.matching(fileEndpoints, "etcd").orElseGet(servers::etcd);
                case ZOOKEEPER -> zookeeper != null ? SettingsFile.withScheme("zookeeper", zookeeper)
                        : LockEndpoints.matching(fileEndpoints, "zookeeper").orElseGet(servers::zookeeper);
                default -> throw new AssertionError(chosen);
            };
            settings.put("warden.lock.endpoints", endpoints);
            out.printf("  %-10s %s on %s%n", "lock", chosen.wire(), Redaction.redact(endpoints));
            out.printf("  %-10s a charge: lock quota:<merchant>, read the balance, price, deduct with the fencing token,"
                    + " release%n", "");
        } else {
            out.printf("  %-10s none%n", "lock");
            out.printf("  %-10s a charge: read the balance, price, deduct; only the Lua balance check guards it%n", "");
        }
        ignored(chosen);

        // The ledger.
        HikariDataSource ds = closer.add("the ledger's connection pool", LedgerDatabase.open(jdbcUrl, jdbcUser, out));
        Ledger.migrate(ds);
        out.printf("  %-10s ledger schema migrated to the current version (Ledger.migrate)%n", "");

        QuotaService quota = closer.add("the quota service", QuotaService.create(settings));
        List<String> accounts = new ArrayList<>();
        for (int i = 0; i < merchants; i++) {
            String account = ACCOUNT_PREFIX + runId + "-" + label(i);
            Outcome opened = quota.open(account, initialQuota);
            if (!(opened instanceof Outcome.Applied)) {
                throw new SetupException("could not open merchant " + account + ": " + opened);
            }
            accounts.add(account);
        }
        LedgerConsumer consumer = closer.add("the journal consumer", LedgerConsumer.builder(settings, ds)
                .consumerName("billing-demo").blockTime(Duration.ofMillis(200)).start());
        out.printf("  %-10s journal consumer running: every deduction goes from the Redis stream into the ledger%n",
                "consumer");
        out.printf("  %-10s %d × %,d units, accounts %s%s-m..; %s%n", "merchants", merchants, initialQuota,
                ACCOUNT_PREFIX, runId, merchants == 1 ? "one merchant takes every charge"
                        : String.format(Locale.ROOT, "m00 is hot: %.0f%% of the charges", hotShare * 100));
        out.printf("  %-10s %d threads each; a charge costs web %s, mini-program %s, openapi %s%n", "channels",
                threads, Channel.WEB.priceRange(), Channel.MINI_PROGRAM.priceRange(), Channel.OPENAPI.priceRange());
        out.println();

        // Charge.
        Load l = new Load(quota, accounts, hotShare, threads, runId);
        long started = System.nanoTime();
        Progress bar = new Progress(out, progress, duration, l::charges);
        try {
            l.run(duration, Duration.ofSeconds(30));
        } finally {
            bar.close();
        }
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        if (l.stuckWorkers() > 0) {
            err.println("warning: " + l.stuckWorkers() + " workers did not finish their charge in time");
        }

        // Drain, reconcile, check.
        out.print("Draining the journal into the ledger ...");
        out.flush();
        long backlog = LedgerSync.drain(consumer, DRAIN_TIMEOUT);
        out.println(backlog == 0 ? " done." : " gave up with " + backlog + " entries left.");
        out.print("Reconciling Redis with the ledger ...");
        out.flush();
        LedgerSync.Reconciliation reconciliation = LedgerSync.reconcile(settings, ds);
        out.println(" done.");

        report = new Invariants(ACCOUNT_PREFIX + runId + "-", accounts, initialQuota)
                .check(chosen.wire(), quota, ds, l, elapsed, backlog, consumer.stats(), reconciliation);
        report.print(out);
        out.flush();
        return report.passed() ? 0 : INVARIANT_FAILED;
    }

    private void ignored(Lock chosen) {
        if (etcd != null && chosen != Lock.ETCD) {
            out.printf("  (--etcd is not used: the lock is %s)%n", chosen.wire());
        }
        if (zookeeper != null && chosen != Lock.ZOOKEEPER) {
            out.printf("  (--zookeeper is not used: the lock is %s)%n", chosen.wire());
        }
    }

    /** {@code m00}, {@code m01}, ...: how the report names the i-th merchant. */
    static String label(int i) {
        return "m" + (i < 10 ? "0" + i : Integer.toString(i));
    }
}
