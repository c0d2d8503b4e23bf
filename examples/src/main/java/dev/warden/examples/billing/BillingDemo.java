package dev.warden.examples.billing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.warden.examples.support.Closer;
import dev.warden.examples.support.DurationConverter;
import dev.warden.examples.support.Interrupts;
import dev.warden.examples.support.QuietLogging;
import dev.warden.examples.support.Servers;
import dev.warden.examples.support.SettingsFile;
import dev.warden.examples.support.SetupException;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.quota.Outcome;
import dev.warden.quota.QuotaException;
import dev.warden.quota.QuotaService;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.QuarantinedEntry;
import dev.warden.quota.ledger.ReconciliationReport;
import dev.warden.quota.ledger.Reconciler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Callable;

/**
 * The billing demo: the seed's scenario end to end in one process. Run it with {@code ./demo.sh}
 * from the repository root; {@code --help} lists the flags.
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
                case REDIS -> redis != null ? redis : matching(fileEndpoints, "redis", "rediss").orElse(quotaEndpoint);
                case ETCD -> etcd != null ? SettingsFile.withScheme("etcd", etcd)
                        : matching(fileEndpoints, "etcd", "etcds").orElseGet(servers::etcd);
                case ZOOKEEPER -> zookeeper != null ? SettingsFile.withScheme("zookeeper", zookeeper)
                        : matching(fileEndpoints, "zookeeper").orElseGet(servers::zookeeper);
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
        HikariDataSource ds = closer.add("the ledger's connection pool", ledger());
        Ledger.migrate(ds);

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
        long backlog = drain(consumer);
        out.println(backlog == 0 ? " done." : " gave up with " + backlog + " entries left.");
        out.print("Reconciling Redis with the ledger ...");
        out.flush();
        ReconciliationReport reconciliation;
        try (Reconciler reconciler = Reconciler.create(settings, ds)) {
            reconciliation = reconciler.check();
        }
        out.println(" done.");

        report = check(chosen, runId, accounts, quota, ds, l, elapsed, backlog, consumer.stats(), reconciliation);
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

    private static Optional<String> matching(String endpoints, String... schemes) {
        if (endpoints == null || endpoints.isBlank()) {
            return Optional.empty();
        }
        for (String scheme : schemes) {
            if (endpoints.trim().startsWith(scheme + "://")) {
                return Optional.of(endpoints.trim());
            }
        }
        return Optional.empty();
    }

    private static String label(int i) {
        return "m" + (i < 10 ? "0" + i : Integer.toString(i));
    }

    private HikariDataSource ledger() {
        String url = jdbcUrl;
        String shown;
        if (url == null) {
            Path dir = demoDirectory();
            Path file = dir.resolve("ledger");
            try {
                Files.createDirectories(dir);
                Files.deleteIfExists(dir.resolve("ledger.mv.db"));
                Files.deleteIfExists(dir.resolve("ledger.trace.db"));
            } catch (IOException e) {
                throw new SetupException("cannot prepare the H2 ledger in " + dir + ": " + e);
            }
            url = "jdbc:h2:file:" + file.toAbsolutePath();
            shown = "H2 file " + file.toAbsolutePath() + ".mv.db (fresh each run, kept afterwards)";
        } else {
            shown = Redaction.redact(url);
        }
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        if (jdbcUser != null) {
            c.setUsername(jdbcUser);
        }
        // From the environment only: a command line is readable by every user of the host.
        String jdbcPassword = System.getenv("WARDEN_JDBC_PASSWORD");
        if (jdbcPassword != null) {
            c.setPassword(jdbcPassword);
        }
        c.setPoolName("billing-demo-ledger");
        c.setMaximumPoolSize(4);
        c.setConnectionTimeout(10_000);
        HikariDataSource ds;
        try {
            ds = new HikariDataSource(c);
        } catch (HikariPool.PoolInitializationException | IllegalArgumentException | IllegalStateException e) {
            throw new SetupException("cannot open the ledger database " + shown + ": "
                    + Redaction.redact(e.getCause() != null ? e.getCause().getMessage() : e.getMessage()), e);
        }
        out.printf("  %-10s %s%n", "ledger", shown);
        out.printf("  %-10s ledger schema migrated to the current version (Ledger.migrate)%n", "");
        return ds;
    }

    /** {@code -Dwarden.demo.dir} (demo.sh: examples/target/warden-demo), else the temporary directory. */
    private static Path demoDirectory() {
        String dir = System.getProperty("warden.demo.dir");
        if (dir != null && !dir.isBlank()) {
            return Path.of(dir);
        }
        return Path.of(System.getProperty("java.io.tmpdir"), "warden-demo-" + System.getProperty("user.name", "user"));
    }

    private static long drain(LedgerConsumer consumer) throws InterruptedException {
        long deadline = System.nanoTime() + DRAIN_TIMEOUT.toNanos();
        long backlog = consumer.backlog();
        while (backlog > 0 && System.nanoTime() - deadline < 0) {
            Thread.sleep(50);
            backlog = consumer.backlog();
        }
        return backlog;
    }

    // ---- the invariants ----

    private Report check(Lock chosen, String runId, List<String> accounts, QuotaService quota, DataSource ds, Load l,
                         Duration elapsed, long backlog, LedgerConsumer.Stats stats,
                         ReconciliationReport reconciliation) throws SQLException {
        String prefix = ACCOUNT_PREFIX + runId + "-";
        Map<String, Long> ledgerBalances = new HashMap<>();
        long ledgerDeductions;
        long ledgerEntries;
        try (Connection c = ds.getConnection()) {
            try (PreparedStatement ps = c.prepareStatement("SELECT account, balance FROM ledger_accounts WHERE account LIKE ?")) {
                ps.setString(1, prefix + "%");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        ledgerBalances.put(rs.getString(1), rs.getLong(2));
                    }
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT COALESCE(SUM(CASE WHEN kind = 'deduct' THEN amount"
                    + " ELSE 0 END), 0), COUNT(*) FROM ledger_entries WHERE account LIKE ?")) {
                ps.setString(1, prefix + "%");
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    ledgerDeductions = rs.getLong(1);
                    ledgerEntries = rs.getLong(2);
                }
            }
        }

        List<Report.Invariant> invariants = new ArrayList<>();
        invariants.add(new Report.Invariant("the journal is drained into the ledger (backlog 0)", backlog == 0,
                String.format(Locale.ROOT, "backlog %d; %,d entries of this run in the ledger", backlog, ledgerEntries)));

        long lowestRedis = Long.MAX_VALUE;
        long lowestLedger = Long.MAX_VALUE;
        List<String> negative = new ArrayList<>();
        List<String> disagree = new ArrayList<>();
        List<String> unbalanced = new ArrayList<>();
        long acknowledged = 0;
        long finals = 0;
        for (int i = 0; i < accounts.size(); i++) {
            String a = accounts.get(i);
            OptionalLong r = quota.balance(a);
            Long d = ledgerBalances.get(a);
            long ack = l.acknowledged(i);
            acknowledged += ack;
            finals += d == null ? 0 : d;
            if (r.isPresent()) {
                lowestRedis = Math.min(lowestRedis, r.getAsLong());
            }
            if (d != null) {
                lowestLedger = Math.min(lowestLedger, d);
            }
            if ((r.isPresent() && r.getAsLong() < 0) || (d != null && d < 0)) {
                negative.add(label(i) + " redis " + text(r) + ", ledger " + d);
            }
            if (r.isEmpty() || d == null || r.getAsLong() != d) {
                disagree.add(label(i) + ": redis " + text(r) + ", ledger " + (d == null ? "absent" : d));
            }
            if (d == null || initialQuota - d != ack) {
                unbalanced.add(label(i) + ": acknowledged " + ack + ", initial − ledger " + (d == null ? "?" : initialQuota - d));
            }
        }
        invariants.add(new Report.Invariant("no balance is negative", negative.isEmpty(), negative.isEmpty()
                ? String.format(Locale.ROOT, "lowest: Redis %,d, ledger %,d (%d merchants)", lowestRedis, lowestLedger,
                accounts.size()) : first(negative)));
        invariants.add(new Report.Invariant("ledger balance = Redis balance, for every merchant", disagree.isEmpty(),
                disagree.isEmpty() ? accounts.size() + " of " + accounts.size() + " merchants agree"
                        : disagree.size() + " disagree: " + first(disagree)));
        long spent = (long) accounts.size() * initialQuota - finals;
        boolean sums = acknowledged == ledgerDeductions && ledgerDeductions == spent && unbalanced.isEmpty();
        invariants.add(new Report.Invariant("Σ acknowledged deductions = Σ ledger deductions = Σ (initial − final)", sums,
                String.format(Locale.ROOT, "%,d = %,d = %,d units%s", acknowledged, ledgerDeductions, spent,
                        unbalanced.isEmpty() ? "; per merchant too" : "; per merchant: " + first(unbalanced))));

        List<QuarantinedEntry> quarantine = Ledger.quarantine(ds, true);
        long ours = quarantine.stream().filter(q -> q.account().startsWith(prefix)).count();
        long others = quarantine.size() - ours;
        invariants.add(new Report.Invariant("no quarantined entries", ours == 0, ours + " unresolved"
                + (others > 0 ? " (" + others + " from earlier runs in this database, not counted)" : "")));

        List<ReconciliationReport.Drift> drift = reconciliation.drifted().stream()
                .filter(d -> d.account().startsWith(prefix)).toList();
        long otherDrift = reconciliation.drifted().size() - drift.size();
        String reconciled = String.format(Locale.ROOT, "%d accounts checked, %d drifted, %d journal entries not yet in"
                        + " the database, %d unresolved quarantined%s", reconciliation.accountsChecked(), drift.size(),
                reconciliation.unpersistedEntries(), reconciliation.unresolvedQuarantine(),
                otherDrift > 0 ? " (" + otherDrift + " accounts of earlier runs differ, not counted)" : "");
        invariants.add(new Report.Invariant("reconciliation finds no drift", drift.isEmpty(), drift.isEmpty()
                ? reconciliation.accountsChecked() + " accounts checked, 0 drifted" : first(drift.stream().map(d -> d.account() + ": redis " + text(d.redisBalance()) + ", expected "
                + text(d.expected())).toList())));

        OptionalLong hotRedis = quota.balance(accounts.get(0));
        String hot = String.format(Locale.ROOT, "m00: %,d → %s units (Redis) / %s (ledger); %,d units acknowledged",
                initialQuota, hotRedis.isPresent() ? String.format(Locale.ROOT, "%,d", hotRedis.getAsLong()) : "absent",
                ledgerBalances.containsKey(accounts.get(0)) ? String.format(Locale.ROOT, "%,d", ledgerBalances.get(accounts.get(0)))
                        : "absent", l.acknowledged(0));
        return new Report(chosen.wire(), elapsed, l.channels(), l.outcomes(), l.usedUp(), l.stalePrices(), l.errors(),
                l.retries(), hot, ledgerEntries, backlog, stats, reconciled, invariants);
    }

    private static String first(List<String> items) {
        return String.join("; ", items.subList(0, Math.min(5, items.size()))) + (items.size() > 5 ? "; ..." : "");
    }

    private static String text(OptionalLong v) {
        return v.isPresent() ? Long.toString(v.getAsLong()) : "absent";
    }
}
