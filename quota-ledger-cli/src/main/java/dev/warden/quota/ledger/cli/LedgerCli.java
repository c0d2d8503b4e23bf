package dev.warden.quota.ledger.cli;

import com.zaxxer.hikari.HikariDataSource;
import dev.warden.lock.Redaction;
import dev.warden.lock.settings.LockSettings;
import dev.warden.lock.settings.Setting;
import dev.warden.lock.settings.SettingTable;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.Ledger;
import dev.warden.quota.ledger.LedgerConsumer;
import dev.warden.quota.ledger.LedgerSettings;
import dev.warden.quota.ledger.Reconciler;
import dev.warden.quota.ledger.reconcile.BootstrapReport;
import dev.warden.quota.ledger.reconcile.ReconciliationReport;
import dev.warden.quota.ledger.reconcile.RepairReport;
import dev.warden.quota.ledger.store.Dialect;
import dev.warden.quota.redis.QuotaSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * The ledger's command line: {@code schema}, {@code consume}, {@code reconcile}, {@code bootstrap},
 * {@code quarantine}. The database is a JDBC URL (PostgreSQL in production; an H2 URL works when the H2
 * jar is on the class path, as in the demo); its password, if any, comes from the environment
 * variable {@code WARDEN_JDBC_PASSWORD} so it never shows in a process list; a password in {@code --jdbc} or
 * {@code --redis} is refused. The Redis password comes from {@code warden.quota.redis.password-file} or
 * {@code -env} (in {@code --settings} or as {@code WARDEN_QUOTA_REDIS__PASSWORD_FILE}).
 *
 * <pre>
 * java -cp ... dev.warden.quota.ledger.LedgerCli schema --jdbc jdbc:postgresql://db/ledger?user=warden --migrate
 * java -cp ... dev.warden.quota.ledger.LedgerCli consume --redis redis://127.0.0.1:6379 --jdbc ...   (run several: they share the partitions)
 * java -cp ... dev.warden.quota.ledger.LedgerCli reconcile --redis ... --jdbc ... [--repair [--apply]] [--every 1h]
 * java -cp ... dev.warden.quota.ledger.LedgerCli bootstrap --redis ... --jdbc ...
 * </pre>
 * Exit codes: 0 success (and, for {@code reconcile}, clean: no drift, nothing unresolved), 1 not clean (drift,
 * unresolved quarantine or refused compensations; for {@code quarantine} and {@code compensations}: some are
 * listed), 2 usage, 3 failure, 4 refused because something must come first (a repair before bootstrap or
 * over unresolved entries: the message says what). See {@code docs/operations.md}.
 */
@Command(name = "ledger", mixinStandardHelpOptions = true, scope = CommandLine.ScopeType.INHERIT, description = "Warden quota ledger: journal consumer, "
        + "reconciliation, schema.", subcommands = {LedgerCli.Schema.class, LedgerCli.Consume.class,
        LedgerCli.Reconcile.class, LedgerCli.Bootstrap.class, LedgerCli.Quarantine.class, LedgerCli.Compensations.class,
        LedgerCli.Settings.class})
public final class LedgerCli implements Callable<Integer> {

    private LedgerCli() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code (for tests and embedding). */
    public static int run(String... args) {
        CommandLine cli = new CommandLine(new LedgerCli());
        cli.registerConverter(Duration.class, CliOptions::duration);
        cli.setExecutionExceptionHandler((e, line, parsed) -> {
            line.getErr().println("ledger: " + Redaction.redact(e.getMessage()));
            if (e instanceof QuotaException q && q.reason() == QuotaException.Reason.RECOVERY_ORDER) {
                return 4;
            }
            return e instanceof QuotaException q && q.reason() == QuotaException.Reason.CONFIGURATION ? 2 : 3;
        });
        // picocli's own messages echo the offending argument, which may be a URL with a password.
        cli.setParameterExceptionHandler((e, ignored) -> {
            CommandLine line = e.getCommandLine();
            line.getErr().println("ledger: " + Redaction.redact(e.getMessage()));
            line.getErr().println("see: ledger " + (line == cli ? "" : line.getCommandName() + " ") + "--help");
            return 2;
        });
        return cli.execute(args);
    }

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 2;
    }

    @Command(name = "schema", description = "Print the ledger's migrations, or bring a database's schema up to"
            + " date (--migrate).")
    static final class Schema implements Callable<Integer> {
        @Option(names = "--jdbc", description = "JDBC URL (required with --migrate)")
        String url;

        @Option(names = "--jdbc-user")
        String user;

        @Option(names = "--migrate", description = "apply the missing migrations (a ledger made before migrations"
                + " existed is recognised and upgraded)")
        boolean migrate;

        @Option(names = "--dialect", defaultValue = "POSTGRESQL", description = "for printing: ${COMPLETION-CANDIDATES}")
        Dialect dialect;

        @Override
        public Integer call() {
            if (!migrate) {
                System.out.print(Ledger.schemaSql(dialect));
                return 0;
            }
            if (url == null) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--migrate needs --jdbc");
            }
            CliOptions.Database db = new CliOptions.Database();
            db.url = url;
            db.user = user;
            db.poolSize = 2; // Flyway holds a connection for its lock while it migrates on another
            try (HikariDataSource ds = db.open()) {
                String version = Ledger.migrate(ds);
                Ledger.verifySchema(ds);
                System.out.println("ledger schema at version " + version + ": " + Ledger.TABLES);
            }
            return 0;
        }
    }

    private static void put(Map<String, Object> settings, String key, Object value) {
        if (value != null) {
            settings.put(key, value.toString());
        }
    }

    @Command(name = "settings", description = "Print every setting the ledger's commands read (from --settings, -D or"
            + " WARDEN_* environment variables): its key, default, environment variable and meaning.")
    static final class Settings implements Callable<Integer> {
        @Override
        public Integer call() {
            for (SettingTable table : List.of(QuotaSettings.TABLE, LedgerSettings.TABLE, LockSettings.TABLE)) {
                System.out.println(table.title() + " (" + table.prefix() + "*)");
                for (Setting<?> s : table.settings()) {
                    System.out.println("  " + String.join(", ", s.keys()) + "  [" + s.shownDefault() + "]  $"
                            + SettingTable.environmentName(s.key()));
                    System.out.println("      " + s.doc().replace("`", ""));
                }
                System.out.println();
            }
            System.out.println("The lock that owns partitions also reads its backend's warden.lock.<backend>.* settings:"
                    + " see docs/settings.md.");
            return 0;
        }
    }

    @Command(name = "consume", description = {"Run the journal consumer until stopped (SIGTERM or Ctrl-C).",
            "Each option sets the warden.ledger.* setting it names, over --settings; `ledger settings` lists every"
                    + " setting with its default and meaning."})
    static final class Consume implements Callable<Integer> {
        @Mixin
        CliOptions.Redis redis = new CliOptions.Redis();
        @Mixin
        CliOptions.Database database = new CliOptions.Database();

        @Option(names = "--consumer", description = "warden.ledger.consumer-name")
        String consumer;

        @Option(names = "--only", split = ",", description = "warden.ledger.partitions: the partitions this consumer may own")
        List<Integer> only;

        @Option(names = "--batch-size", description = "warden.ledger.batch-size")
        Integer batchSize;

        @Option(names = "--block", description = "warden.ledger.block-time")
        Duration block;

        @Option(names = "--sweep", description = "warden.ledger.sweep-interval")
        Duration sweep;

        @Option(names = "--rebalance", description = "warden.ledger.rebalance-interval")
        Duration rebalance;

        @Option(names = "--max-backoff", description = "warden.ledger.retry-backoff-max")
        Duration maxBackoff;

        @Override
        public Integer call() throws InterruptedException {
            // The options are settings too: the ledger's table reads and checks them with the file's.
            Map<String, Object> settings = redis.settings();
            put(settings, LedgerSettings.CONSUMER_NAME.key(), consumer);
            put(settings, LedgerSettings.PARTITIONS.key(), only == null ? null
                    : only.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(",")));
            put(settings, LedgerSettings.BATCH_SIZE.key(), batchSize);
            put(settings, LedgerSettings.BLOCK_TIME.key(), block);
            put(settings, LedgerSettings.SWEEP_INTERVAL.key(), sweep);
            put(settings, LedgerSettings.REBALANCE_INTERVAL.key(), rebalance);
            put(settings, LedgerSettings.RETRY_BACKOFF_MAX.key(), maxBackoff);
            try (HikariDataSource ds = database.open()) {
                LedgerConsumer.Builder b = LedgerConsumer.builder(settings, ds);
                CountDownLatch done = new CountDownLatch(1);
                LedgerConsumer c = b.build();
                Thread hook = new Thread(() -> {
                    c.close();
                    done.countDown();
                }, "warden-ledger-shutdown");
                Runtime.getRuntime().addShutdownHook(hook);
                c.start();
                System.out.println("ledger consumer " + c.consumerName() + " started; partitions are owned through "
                        + "the lock of warden.lock.* (default: Redis on the quota endpoint)");
                System.out.flush();
                done.await();
                return 0;
            }
        }
    }

    @Command(name = "reconcile", description = "Compare Redis with the ledger; --repair rewrites Redis from the"
            + " database for drained accounts (a dry run unless --apply); --every repeats it.")
    static final class Reconcile implements Callable<Integer> {
        @Mixin
        CliOptions.Redis redis = new CliOptions.Redis();
        @Mixin
        CliOptions.Database database = new CliOptions.Database();

        @Option(names = "--repair", description = "plan (or with --apply, make) repairs")
        boolean repair;

        @Option(names = "--apply", description = "with --repair: write Redis (default: dry run)")
        boolean apply;

        @Option(names = "--every", description = "run on a schedule until stopped, e.g. 1h")
        Duration every;

        @Override
        public Integer call() throws InterruptedException {
            try (HikariDataSource ds = database.open();
                 Reconciler r = Reconciler.create(redis.settings(), ds, CliOptions.Redis.group(redis.settings()))) {
                if (every != null) {
                    CountDownLatch forever = new CountDownLatch(1);
                    try (AutoCloseable ignored = r.schedule(every, repair && apply, report -> {
                        System.out.println(report);
                        System.out.flush();
                    })) {
                        forever.await();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                    return 0;
                }
                if (repair) {
                    RepairReport rr = r.repair(apply);
                    System.out.println(rr.before());
                    for (RepairReport.Repair x : rr.repairs()) {
                        System.out.println((apply ? "repair " : "would repair ") + x.account() + ": redis "
                                + (x.from().isPresent() ? x.from().getAsLong() : "absent") + " -> " + x.to() + " "
                                + x.status());
                    }
                    for (ReconciliationReport.Drift d : rr.skipped()) {
                        System.out.println("left alone " + d.account() + (!d.balance().isEmpty()
                                ? ", balance " + d.balance() + ": named balances are reported, never repaired"
                                : d.drained() ? ": only Redis holds it" : ": entries in flight, check again"));
                    }
                    return rr.before().clean() ? 0 : 1;
                }
                ReconciliationReport report = r.check();
                System.out.println(report);
                return report.clean() ? 0 : 1;
            }
        }
    }

    @Command(name = "bootstrap", description = "Load the ledger's accounts into Redis after it lost its data, and"
            + " write every partition marker. Idempotent.")
    static final class Bootstrap implements Callable<Integer> {
        @Mixin
        CliOptions.Redis redis = new CliOptions.Redis();
        @Mixin
        CliOptions.Database database = new CliOptions.Database();

        @Override
        public Integer call() {
            try (HikariDataSource ds = database.open();
                 Reconciler r = Reconciler.create(redis.settings(), ds, CliOptions.Redis.group(redis.settings()))) {
                BootstrapReport b = r.bootstrap();
                System.out.println("bootstrap: " + b.accountsLoaded() + " accounts loaded (" + b.balancesLoaded()
                        + " named balances), " + b.accountsPresent() + " already present, " + b.markersWritten()
                        + " partition markers written");
                return 0;
            }
        }
    }

    @Command(name = "quarantine", description = "List the quarantined journal entries, or mark one resolved.")
    static final class Quarantine implements Callable<Integer> {
        @Mixin
        CliOptions.Database database = new CliOptions.Database();

        @Mixin
        CliOptions.Resolution resolution = new CliOptions.Resolution();

        @Override
        public Integer call() {
            try (HikariDataSource ds = database.open()) {
                return resolution.run(ds, "quarantined entry", "quarantined entries", Ledger::resolveQuarantined, Ledger::quarantine,
                        q -> q.stream() + " " + q.entryId() + " " + q.reason() + " account=" + q.account() + " " + q.fields()
                                + ": " + q.detail() + q.resolvedAt().map(t -> " (resolved " + t + ")").orElse(""));
            }
        }
    }

    @Command(name = "compensations", description = "List the compensations Redis refused (a replay both sides hold),"
            + " or mark one resolved.")
    static final class Compensations implements Callable<Integer> {
        @Mixin
        CliOptions.Database database = new CliOptions.Database();

        @Mixin
        CliOptions.Resolution resolution = new CliOptions.Resolution();

        @Override
        public Integer call() {
            try (HikariDataSource ds = database.open()) {
                return resolution.run(ds, "refused compensation", "refused compensations", Ledger::resolveCompensation, Ledger::refusedCompensations,
                        r -> r.stream() + " " + r.entryId() + " account=" + r.account() + " replayed "
                                + r.replayKind().wireName() + " " + r.amount() + " '" + r.requestId() + "': compensation "
                                + r.compensationRequestId() + " answered " + r.outcome()
                                + r.resolvedAt().map(t -> " (resolved " + t + ")").orElse(""));
            }
        }
    }
}
