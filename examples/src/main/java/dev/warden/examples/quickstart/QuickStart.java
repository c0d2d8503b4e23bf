package dev.warden.examples.quickstart;

import dev.warden.examples.support.Closer;
import dev.warden.examples.support.LockEndpoints;
import dev.warden.examples.support.QuietLogging;
import dev.warden.examples.support.Servers;
import dev.warden.examples.support.SettingsFile;
import dev.warden.examples.support.SetupException;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.ReleaseOutcome;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;

/**
 * The quick start: one program for every backend; only the settings file differs
 * ({@code examples/config/redis.properties}, {@code etcd.properties}, {@code zookeeper.properties}).
 * It acquires a lock, writes to a resource with the lease's fencing token, shows that a write
 * carrying an older token is refused, and releases.
 */
@Command(name = "quick-start", mixinStandardHelpOptions = true, usageHelpAutoWidth = true,
        version = "Warden quick start 0.1.0-SNAPSHOT",
        description = {
            "Acquire a lock, make a fenced write, release: the same code for Redis, etcd and ZooKeeper, the backend chosen"
                    + " by the settings file.",
            ""},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:done", "2:usage error", "3:the backend could not be reached (try --embedded)"})
public final class QuickStart implements Callable<Integer> {

    /** What {@link #execute} returns. */
    public record Result(int exitCode, String backend, long fencingToken, boolean fencedWriteAccepted,
                         boolean staleWriteRefused, ReleaseOutcome release) {
    }

    @Parameters(paramLabel = "FILE", defaultValue = "examples/config/redis.properties",
            description = "Settings file with warden.lock.* settings (default: ${DEFAULT-VALUE}).")
    Path file;

    @Option(names = "--embedded", description = "Launch a local server for the file's backend (testkit) instead of"
            + " using the endpoints the file names.")
    boolean embedded;

    private PrintStream out = System.out;
    private PrintStream err = System.err;
    private Result result;

    public static void main(String[] args) {
        System.exit(execute(args, System.out, System.err).exitCode());
    }

    /** Runs in this process and returns instead of exiting. */
    public static Result execute(String[] args, PrintStream out, PrintStream err) {
        QuickStart q = new QuickStart();
        q.out = out;
        q.err = err;
        QuietLogging.apply();
        CommandLine cli = new CommandLine(q)
                .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
                .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setParameterExceptionHandler((e, given) -> {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            return 2;
        });
        int code = cli.execute(args);
        return q.result != null ? q.result : new Result(code, "", 0, false, false, null);
    }

    @Override
    public Integer call() throws Exception {
        Map<String, String> settings;
        try {
            settings = new LinkedHashMap<>(SettingsFile.load(file));
        } catch (SetupException e) {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            return 2;
        }
        String backend = LockEndpoints.backend(null, settings);
        try (Closer closer = new Closer()) {
            if (embedded) {
                settings.remove("warden.lock.endpoints");
                LockEndpoints.resolve(settings, backend, null, new Servers(closer, out));
            }
            out.printf("%s: backend %s at %s%n", file, backend, Redaction.redact(settings.get("warden.lock.endpoints")));
            return quickStart(settings, backend);
        } catch (SetupException e) {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            return 3;
        } catch (LockException e) {
            err.println("quick-start: " + Redaction.redact(e.getMessage()));
            if (e.reason() == LockException.Reason.UNAVAILABLE) {
                err.println("quick-start: nothing answers at " + Redaction.redact(settings.get("warden.lock.endpoints"))
                        + ": start a server there, or run with --embedded");
                return 3;
            }
            return e.reason() == LockException.Reason.CONFIGURATION ? 2 : 3;
        }
    }

    private int quickStart(Map<String, String> settings, String backend) throws SQLException {
        // ---- the quick start proper: nothing below depends on the backend ----
        try (LockClient locks = LockClient.create(settings); FencedStore reports = new FencedStore()) {
            DistributedLock lock = locks.lock("daily-report");
            Lease lease = lock.tryAcquire(Duration.ofSeconds(10))
                    .orElseThrow(() -> new SetupException("the lock 'daily-report' stayed busy for 10 s"));
            boolean accepted;
            boolean refused;
            ReleaseOutcome released;
            try {
                out.printf("acquired 'daily-report': fencing token %d, lease valid for %d ms%n", lease.fencingToken(),
                        lease.remaining().toMillis());
                accepted = reports.write("daily", "the report, written under the lock", lease.fencingToken());
                out.printf("fenced write with token %d: %s%n", lease.fencingToken(), accepted ? "accepted" : "REFUSED");
                // A holder that was superseded would carry an older token; the resource refuses it.
                refused = !reports.write("daily", "a late write from a superseded holder", lease.fencingToken() - 1);
                out.printf("write with the older token %d: %s%n", lease.fencingToken() - 1, refused ? "refused" : "ACCEPTED");
            } finally {
                released = lease.release();
            }
            out.printf("released: %s%n", released);
            result = new Result(0, backend, lease.fencingToken(), accepted, refused, released);
            return accepted && refused ? 0 : 1;
        }
    }

    /**
     * A resource guarded by fencing tokens: it remembers the highest token that wrote to each row and
     * refuses a write carrying a lower one, in the same statement as the write (here an in-memory H2
     * table; in production the database you write to).
     */
    static final class FencedStore implements AutoCloseable {

        private final Connection connection;

        FencedStore() throws SQLException {
            connection = DriverManager.getConnection("jdbc:h2:mem:quickstart-" + UUID.randomUUID());
            try (Statement s = connection.createStatement()) {
                s.execute("CREATE TABLE reports (name VARCHAR(64) PRIMARY KEY, content VARCHAR(1000), token BIGINT NOT NULL)");
                s.execute("INSERT INTO reports VALUES ('daily', '', 0)");
            }
        }

        /** Writes unless a higher token has written this row; returns whether it wrote. */
        boolean write(String name, String content, long token) throws SQLException {
            try (PreparedStatement ps = connection.prepareStatement(
                    "UPDATE reports SET content = ?, token = ? WHERE name = ? AND token <= ?")) {
                ps.setString(1, content);
                ps.setLong(2, token);
                ps.setString(3, name);
                ps.setLong(4, token);
                return ps.executeUpdate() == 1;
            }
        }

        @Override
        public void close() throws SQLException {
            connection.close();
        }
    }
}
