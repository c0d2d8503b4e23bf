package dev.warden.lock.jdbc.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.EpochRecordingDriver;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderEvictingDriver;
import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Savepoint;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One client's view of the lock tables: attempts on locks ({@code warden_lock}) and on shared names
 * ({@code warden_lock_share}), renewal and release by owner and token, the operator's
 * reads and eviction, token floors for a backend switch, and the fencing epoch. Every call is one statement
 * ({@link Statements}) run by {@link Calls}; waiters are woken by {@link Notifications}.
 *
 * <p>Concurrency: immutable after {@link #open}; the parts guard their own state.
 */
public final class JdbcDriver implements HolderListingDriver, HolderEvictingDriver, TokenFloorDriver, EpochRecordingDriver,
        SharedLockDriver, LeaseCachingDriver {

    private static final Logger log = LoggerFactory.getLogger(JdbcDriver.class);

    /** PostgreSQL's SQLState for a lock not obtained within {@code lock_timeout}. */
    private static final String LOCK_NOT_AVAILABLE = "55P03";

    /** Rows per page of an operator's listing. */
    private static final int PAGE = 500;

    private final String namespace;
    private final Calls calls;
    private final Notifications notifications;
    /** Whether {@code warden_lock} has the column {@code watched}, so contenders of kept locks can be reported. */
    private final boolean watchable;
    /** Set once the missing column was reported: a warning once per client, not per kept lock. */
    private final AtomicBoolean toldUnwatchable = new AtomicBoolean();

    private JdbcDriver(String namespace, Calls calls, Notifications notifications, boolean watchable) {
        this.namespace = namespace;
        this.calls = calls;
        this.notifications = notifications;
        this.watchable = watchable;
    }

    /**
     * Connects the pool (creating the schema when configured to) and the listening connection.
     *
     * @throws LockException {@code UNAVAILABLE} when the database cannot be reached within the connect
     *         timeout; {@code ACCESS_DENIED} when the login or the schema's creation is refused
     */
    public static JdbcDriver open(LockConfig config, JdbcSettings settings) {
        Calls calls = Calls.open(settings, config.connectTimeout(), config.requestTimeout());
        boolean watchable;
        try {
            if (settings.createSchema()) {
                createSchema(calls, config.connectTimeout());
            }
            watchable = !watchedColumnMissing(calls, config.connectTimeout());
        } catch (RuntimeException e) {
            calls.close();
            throw e;
        }
        Notifications notifications = new Notifications(settings.url(),
                Calls.connectionProperties(settings, config.connectTimeout(), config.requestTimeout()));
        // A lock granted before the client listens could not have its contenders reported.
        notifications.awaitListening(config.connectTimeout());
        return new JdbcDriver(config.namespace(), calls, notifications, watchable);
    }

    /**
     * Adds the column {@code watched} to a lock table an earlier version made. The {@code ALTER} needs the
     * table's exclusive lock, and every lock statement would queue behind it while it waits: it waits 2 s at
     * most, and when that is not enough the client opens without it (nothing is kept; said once at the first
     * kept lock), to try again at the next client's start.
     */
    private static void addWatchedColumn(Connection c, Statement s) throws SQLException {
        Savepoint before = c.setSavepoint();
        try {
            s.execute("SET LOCAL lock_timeout = '2s'");
            s.execute(Statements.ADD_WATCHED_COLUMN);
            c.releaseSavepoint(before);
        } catch (SQLException e) {
            if (!LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                throw e;
            }
            c.rollback(before);
            log.warn("could not add the column 'watched' to warden_lock within 2 s (the table is busy); locks work,"
                    + " and none is kept after release (warden.lock.lease-cache) until a client adds it");
        }
    }

    /** Whether the lock table lacks the column {@code watched} (created before lease caching, by someone else). */
    private static boolean watchedColumnMissing(Calls calls, Duration within) {
        try {
            return calls.call("reading the lock table's columns", within, c -> {
                try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(Statements.WATCHED_COLUMN_MISSING)) {
                    return r.next() && r.getBoolean(1);
                }
            }).get(within.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockException(LockException.Reason.INTERRUPTED, "interrupted while reading the lock table's columns");
        } catch (java.util.concurrent.ExecutionException e) {
            throw e.getCause() instanceof LockException l ? l : Calls.translate("reading the lock table's columns", e.getCause());
        } catch (java.util.concurrent.TimeoutException e) {
            throw new LockException(LockException.Reason.UNAVAILABLE, "reading the lock table's columns took longer than "
                    + within.toMillis() + " ms");
        }
    }

    private static void createSchema(Calls calls, Duration within) {
        CompletableFuture<Void> created = calls.call("creating the lock tables", within, c -> {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                // DDL may wait for a lock longer than one request: give it the connect timeout.
                s.execute("SET LOCAL statement_timeout = " + Math.max(1, within.toMillis()));
                for (String sql : Statements.SCHEMA) {
                    s.execute(sql);
                }
                boolean noWatched;
                try (ResultSet r = s.executeQuery(Statements.WATCHED_COLUMN_MISSING)) {
                    noWatched = r.next() && r.getBoolean(1);
                }
                if (noWatched) {
                    addWatchedColumn(c, s);
                }
                boolean missing;
                try (ResultSet r = s.executeQuery(Statements.SHARE_POLL_FUNCTION_MISSING)) {
                    missing = r.next() && r.getBoolean(1);
                }
                if (missing) {
                    s.execute(Statements.SHARE_POLL_FUNCTION);
                }
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
            return null;
        });
        try {
            created.join();
        } catch (java.util.concurrent.CompletionException e) {
            throw e.getCause() instanceof LockException l ? l : Calls.translate("creating the lock tables", e.getCause());
        }
    }

    String namespace() {
        return namespace;
    }

    Calls calls() {
        return calls;
    }

    JdbcWait waitFor(String name) {
        return new JdbcWait(notifications, calls, Notifications.key(namespace, name));
    }

    boolean watchable() {
        return watchable;
    }

    @Override
    public LockAttempt attempt(String name, String owner) {
        return new JdbcAttempt(this, name, owner, false);
    }

    /** Its grant marks the row watched: a poll the holder refuses then notifies the contender channel. */
    @Override
    public LockAttempt attemptKept(String name, String owner) {
        return new JdbcAttempt(this, name, owner, true);
    }

    /**
     * Listens for the polls a watched row refuses (on the client's listening connection: no round trip). A
     * contender that asked since the grant's poll, or while notifications could have been lost, is reported
     * at once. On a table without the column {@code watched}, fails: the client then keeps nothing.
     */
    @Override
    public CompletionStage<ContenderWatch> watchContenders(String name, Grant grant, Runnable asked) {
        if (!(grant instanceof JdbcGrant g)) {
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.PROTOCOL,
                    "contenders are watched for locks only, not for a share of a shared name"));
        }
        if (!watchable) {
            String message = "the table warden_lock has no column 'watched', so lock '" + name + "' is not kept after"
                    + " release (warden.lock.lease-cache); add it: " + Statements.ADD_WATCHED_COLUMN;
            if (toldUnwatchable.compareAndSet(false, true)) {
                log.warn(message);
            }
            return CompletableFuture.failedFuture(new LockException(LockException.Reason.CONFIGURATION, message));
        }
        return CompletableFuture.completedFuture(
                notifications.watchContenders(Notifications.key(g.namespace(), g.name()), g.polledAtNanos(), asked));
    }

    @Override
    public LockAttempt attemptShared(String name, String owner, Share share) {
        return new SharedAttempt(this, name, owner, share);
    }

    @Override
    public CompletionStage<Boolean> renew(Grant grant, Duration ttl) {
        if (grant instanceof SharedGrant g) {
            return calls.call("renewing shared name '" + g.name() + "'", c -> {
                try (PreparedStatement s = c.prepareStatement(Statements.SHARE_RENEW)) {
                    s.setLong(1, Math.max(1, ttl.toMillis()));
                    s.setString(2, g.namespace());
                    s.setString(3, g.name());
                    s.setString(4, g.owner());
                    s.setLong(5, g.fencingToken());
                    return s.executeUpdate() == 1;
                }
            });
        }
        JdbcGrant g = (JdbcGrant) grant;
        return calls.call("renewing lock '" + g.name() + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.RENEW)) {
                s.setLong(1, Math.max(1, ttl.toMillis()));
                s.setString(2, g.namespace());
                s.setString(3, g.name());
                s.setString(4, g.owner());
                s.setLong(5, g.fencingToken());
                return s.executeUpdate() == 1;
            }
        });
    }

    @Override
    public CompletionStage<Boolean> release(Grant grant) {
        return calls.call("releasing '" + nameOf(grant) + "'", c -> release(c, grant));
    }

    private static String nameOf(Grant grant) {
        return grant instanceof SharedGrant s ? s.name() : ((JdbcGrant) grant).name();
    }

    private boolean release(Connection c, Grant grant) throws SQLException {
        if (grant instanceof SharedGrant g) {
            try (PreparedStatement s = c.prepareStatement(Statements.SHARE_RELEASE)) {
                s.setString(1, g.namespace());
                s.setString(2, g.name());
                s.setString(3, g.owner());
                s.setLong(4, g.fencingToken());
                s.setString(5, Notifications.key(g.namespace(), g.name()));
                try (ResultSet r = s.executeQuery()) {
                    return r.next() && r.getBoolean(1);
                }
            }
        }
        JdbcGrant g = (JdbcGrant) grant;
        try (PreparedStatement s = c.prepareStatement(Statements.RELEASE)) {
            s.setString(1, g.namespace());
            s.setString(2, g.name());
            s.setString(3, g.owner());
            s.setLong(4, g.fencingToken());
            s.setString(5, Notifications.key(g.namespace(), g.name()));
            try (ResultSet r = s.executeQuery()) {
                return r.next();
            }
        }
    }

    /** Releases a grant no caller will see (its poll's stage had already failed); a failure leaves it to expire. */
    void releaseQuietly(Grant grant) {
        calls.call("releasing a late grant of '" + nameOf(grant) + "'", c -> release(c, grant));
    }

    @Override
    public CompletionStage<Optional<Holder>> holder(String name) {
        return calls.call("reading the holder of lock '" + name + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.HOLDER)) {
                s.setString(1, namespace);
                s.setString(2, name);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? Optional.of(new Holder(r.getString(1), r.getLong(2))) : Optional.<Holder>empty();
                }
            }
        });
    }

    @Override
    public CompletionStage<List<NamedHolder>> holders(Duration limit) {
        // Pages in name order, each one statement; the whole listing is bounded by the limit, not one request.
        CompletableFuture<List<NamedHolder>> all = new CompletableFuture<>();
        long deadline = System.nanoTime() + limit.toNanos();
        page(new ArrayList<>(), "", deadline, all);
        return all;
    }

    private void page(List<NamedHolder> sofar, String after, long deadline, CompletableFuture<List<NamedHolder>> all) {
        if (System.nanoTime() - deadline > 0) {
            all.completeExceptionally(new LockException(LockException.Reason.TIMEOUT,
                    "listing the holders did not finish within its limit (" + sofar.size() + " read)"));
            return;
        }
        calls.call("listing the holders", c -> {
            List<NamedHolder> rows = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement(Statements.HOLDERS)) {
                s.setString(1, namespace);
                s.setString(2, after);
                s.setInt(3, PAGE);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        rows.add(new NamedHolder(r.getString(1), new Holder(r.getString(2), r.getLong(3))));
                    }
                }
            }
            return rows;
        }).whenComplete((rows, e) -> {
            if (e != null) {
                all.completeExceptionally(e);
                return;
            }
            sofar.addAll(rows);
            if (rows.size() < PAGE) {
                all.complete(List.copyOf(sofar));
            } else {
                page(sofar, rows.get(rows.size() - 1).name(), deadline, all);
            }
        });
    }

    @Override
    public CompletionStage<Boolean> evict(String name, long token) {
        return calls.call("evicting the holder of lock '" + name + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.EVICT)) {
                s.setString(1, namespace);
                s.setString(2, name);
                s.setLong(3, token);
                s.setString(4, Notifications.key(namespace, name));
                try (ResultSet r = s.executeQuery()) {
                    return r.next();
                }
            }
        });
    }

    @Override
    public CompletionStage<Boolean> evicted(Grant grant) {
        if (!(grant instanceof JdbcGrant g)) {
            return CompletableFuture.completedFuture(false);
        }
        return calls.call("reading whether lock '" + g.name() + "' was evicted", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.EVICTED)) {
                s.setString(1, g.namespace());
                s.setString(2, g.name());
                s.setLong(3, g.fencingToken());
                try (ResultSet r = s.executeQuery()) {
                    return r.next();
                }
            }
        });
    }

    @Override
    public CompletionStage<Boolean> raiseTokenFloor(Grant grant, long floor) {
        if (!(grant instanceof JdbcGrant g)) {
            return CompletableFuture.completedFuture(false);
        }
        return calls.call("raising the token floor of lock '" + g.name() + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.RAISE_FLOOR)) {
                s.setLong(1, floor);
                s.setString(2, g.namespace());
                s.setString(3, g.name());
                s.setString(4, g.owner());
                s.setLong(5, g.fencingToken());
                return s.executeUpdate() == 1;
            }
        });
    }

    @Override
    public CompletionStage<Integer> recordEpoch(int epoch) {
        return calls.call("recording the fencing epoch", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.RECORD_EPOCH)) {
                s.setString(1, namespace);
                s.setString(2, namespace);
                s.setInt(3, epoch);
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    return r.getInt(1);
                }
            }
        });
    }

    @Override
    public void close() {
        notifications.close();
        calls.close();
    }
}
