package dev.warden.examples.quickstart;

import dev.warden.examples.Config;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;
import dev.warden.lock.ReleaseOutcome;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The quick start: acquire a lock, write to a resource with the lease's fencing token, see a write
 * carrying an older token refused, release. The code is the same for Redis, etcd and ZooKeeper; only
 * the settings file differs ({@code examples/config/redis.properties}, {@code etcd.properties},
 * {@code zookeeper.properties}: {@code warden.lock.backend} and {@code warden.lock.endpoints}).
 *
 * <pre>
 * java dev.warden.examples.quickstart.QuickStart examples/config/etcd.properties
 * </pre>
 * Exit code: 0 done, 1 the fencing did not behave, 3 the backend could not be reached.
 */
public final class QuickStart {

    /** What one run did. */
    public record Result(String backend, long fencingToken, boolean fencedWriteAccepted, boolean staleWriteRefused,
                         ReleaseOutcome release) {
    }

    private QuickStart() {
    }

    public static void main(String[] args) throws SQLException {
        System.exit(run(args, System.out));
    }

    /** Reads the settings file named by {@code args[0]} (default: the Redis one) and runs; returns the exit code. */
    public static int run(String[] args, PrintStream out) throws SQLException {
        Map<String, Object> settings = Config.load(args.length > 0 ? args[0] : "examples/config/redis.properties");
        try {
            Result r = quickStart(settings, out);
            return r.fencedWriteAccepted() && r.staleWriteRefused() ? 0 : 1;
        } catch (LockException e) {
            // Endpoints may carry a password: Redaction keeps it out of what is printed.
            out.println("quick-start: " + Redaction.redact(e.getMessage()) + " (reason " + e.reason() + ")");
            return 3;
        }
    }

    /** The quick start proper: nothing here depends on the backend. */
    public static Result quickStart(Map<String, ?> settings, PrintStream out) throws SQLException {
        try (LockClient locks = LockClient.create(settings); FencedStore reports = new FencedStore()) {
            DistributedLock lock = locks.lock("daily-report");
            Optional<Lease> acquired = lock.tryAcquire(Duration.ofSeconds(10));
            if (acquired.isEmpty()) {
                throw new IllegalStateException("the lock 'daily-report' stayed busy for 10 s");
            }
            Lease lease = acquired.get();
            boolean accepted;
            boolean refused;
            ReleaseOutcome released;
            try {
                out.printf("acquired 'daily-report' on %s: fencing token %d, lease valid for %d ms%n", locks.backend(),
                        lease.fencingToken(), lease.remaining().toMillis());
                accepted = reports.write("daily", "the report, written under the lock", lease.fencingToken());
                out.printf("fenced write with token %d: %s%n", lease.fencingToken(), accepted ? "accepted" : "REFUSED");
                // A holder that was superseded would carry an older token; the resource refuses it.
                refused = !reports.write("daily", "a late write from a superseded holder", lease.fencingToken() - 1);
                out.printf("write with the older token %d: %s%n", lease.fencingToken() - 1, refused ? "refused" : "ACCEPTED");
            } finally {
                released = lease.release();
            }
            out.printf("released: %s%n", released);
            return new Result(locks.backend(), lease.fencingToken(), accepted, refused, released);
        }
    }

    /**
     * A resource guarded by fencing tokens: it remembers the highest token that wrote each row and
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
