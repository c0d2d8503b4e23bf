package dev.warden.lock.jdbc.internal;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;
import dev.warden.lock.LockException;
import dev.warden.lock.Redaction;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Runs statements: JDBC blocks, so each call runs on one of {@code poolSize} threads with a pooled
 * connection, and its stage fails with {@code UNAVAILABLE} when the request timeout passes first. A call
 * still queued when its stage has failed is skipped; one whose answer arrives too late hands it to its
 * {@code late} consumer (a grant nobody will see is released there). The server also bounds each statement
 * ({@code statement_timeout}), and the socket read is bounded, so a thread stuck on a frozen server comes back.
 *
 * <p>Concurrency: {@code closed} is volatile; the pool, the executors and their queues are thread-safe.
 */
final class Calls implements AutoCloseable {

    /** A statement's body, on a borrowed connection. */
    interface Body<T> {
        T run(Connection connection) throws SQLException;
    }

    private final HikariDataSource pool;
    private final ThreadPoolExecutor threads;
    private final ScheduledExecutorService timer;
    private final long timeoutMillis;
    private volatile boolean closed;

    private Calls(HikariDataSource pool, ThreadPoolExecutor threads, ScheduledExecutorService timer, long timeoutMillis) {
        this.pool = pool;
        this.threads = threads;
        this.timer = timer;
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Opens the pool; fails with {@code UNAVAILABLE} when no connection comes within {@code connectTimeout},
     * {@code ACCESS_DENIED} when the login is refused.
     */
    static Calls open(JdbcSettings settings, Duration connectTimeout, Duration requestTimeout) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("warden-lock-jdbc");
        config.setJdbcUrl(settings.url());
        config.setDataSourceProperties(connectionProperties(settings, connectTimeout, requestTimeout));
        config.setMaximumPoolSize(settings.poolSize());
        config.setMinimumIdle(Math.min(2, settings.poolSize()));
        // Hikari's floor for both is 250 ms; a call's own deadline is enforced here anyway.
        config.setConnectionTimeout(Math.max(250, requestTimeout.toMillis()));
        config.setValidationTimeout(Math.max(250, requestTimeout.toMillis()));
        config.setInitializationFailTimeout(Math.max(1, connectTimeout.toMillis()));
        config.setAutoCommit(true);
        HikariDataSource pool;
        try {
            pool = new HikariDataSource(config);
        } catch (HikariPool.PoolInitializationException e) {
            Throwable cause = e.getCause() instanceof SQLException s ? s : e;
            throw translate("connecting to " + Redaction.redact(settings.url()), cause);
        }
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor threads = new ThreadPoolExecutor(settings.poolSize(), settings.poolSize(), 30, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> daemon(r, "warden-jdbc-" + n.incrementAndGet()));
        threads.allowCoreThreadTimeOut(true);
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> daemon(r, "warden-jdbc-timer"));
        timer.setRemoveOnCancelPolicy(true);
        return new Calls(pool, threads, timer, requestTimeout.toMillis());
    }

    /** What every connection (the pool's and the listener's) is opened with; the password only when set. */
    static Properties connectionProperties(JdbcSettings settings, Duration connectTimeout, Duration requestTimeout) {
        Properties p = new Properties();
        if (settings.username() != null) {
            p.setProperty("user", settings.username());
        }
        if (settings.password() != null) {
            p.setProperty("password", settings.password());
        }
        int connectSeconds = (int) Math.max(1, (connectTimeout.toMillis() + 999) / 1000);
        p.setProperty("connectTimeout", Integer.toString(connectSeconds));
        p.setProperty("loginTimeout", Integer.toString(connectSeconds));
        // A read blocked on a frozen server gives its thread back: twice the request timeout, whole seconds.
        p.setProperty("socketTimeout", Long.toString(Math.max(1, (2 * requestTimeout.toMillis() + 999) / 1000)));
        p.setProperty("tcpKeepAlive", "true");
        p.setProperty("ApplicationName", "warden-lock");
        // The server gives up on a statement (waiting on a row lock, say) once the client has.
        p.setProperty("options", "-c statement_timeout=" + Math.max(1, requestTimeout.toMillis()));
        return p;
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    boolean isClosed() {
        return closed;
    }

    /** {@link #call(String, Body, Consumer)} with nothing to undo for a late answer. */
    <T> CompletableFuture<T> call(String what, Body<T> body) {
        return call(what, body, late -> { });
    }

    /**
     * Runs {@code body} on a pooled connection within the request timeout.
     *
     * @param what what the call does, for messages ("acquiring lock 'x'")
     * @param late told an answer that came after the stage had already failed
     */
    <T> CompletableFuture<T> call(String what, Body<T> body, Consumer<T> late) {
        return call(what, timeoutMillis, body, late);
    }

    /** {@link #call(String, Body)} within {@code within} rather than the request timeout (the schema's DDL at open). */
    <T> CompletableFuture<T> call(String what, Duration within, Body<T> body) {
        return call(what, Math.max(1, within.toMillis()), body, late -> { });
    }

    private <T> CompletableFuture<T> call(String what, long timeoutMillis, Body<T> body, Consumer<T> late) {
        CompletableFuture<T> result = new CompletableFuture<>();
        if (closed) {
            result.completeExceptionally(closedException());
            return result;
        }
        try {
            threads.execute(() -> run(what, body, late, result));
            ScheduledFuture<?> deadline = timer.schedule(() -> result.completeExceptionally(new LockException(
                    LockException.Reason.UNAVAILABLE, what + ": the database did not answer within " + timeoutMillis + " ms")),
                    timeoutMillis, TimeUnit.MILLISECONDS);
            result.whenComplete((v, e) -> deadline.cancel(false));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            result.completeExceptionally(closedException());
        }
        return result;
    }

    private <T> void run(String what, Body<T> body, Consumer<T> late, CompletableFuture<T> result) {
        if (result.isDone()) {
            return;
        }
        T value;
        try (Connection c = pool.getConnection()) {
            value = body.run(c);
        } catch (SQLException | RuntimeException e) {
            result.completeExceptionally(translate(what, e));
            return;
        }
        if (!result.complete(value)) {
            late.accept(value);
        }
    }

    /** Runs {@code task} on the timer after {@code delayMillis}; null once closed. */
    ScheduledFuture<?> schedule(Runnable task, long delayMillis) {
        try {
            return timer.schedule(task, delayMillis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            return null;
        }
    }

    /** Runs {@code task} soon, off the calling thread (a listener's or a caller's). */
    void execute(Runnable task) {
        try {
            timer.execute(task);
        } catch (java.util.concurrent.RejectedExecutionException ignored) {
            // closed: nothing waits any more
        }
    }

    /**
     * A failure as lock-api reads it: the database unreachable, restarting or too slow is {@code UNAVAILABLE}
     * (the acquire loop retries); a refused login or privilege {@code ACCESS_DENIED}; anything else
     * {@code PROTOCOL}. Messages are redacted: a driver's message may quote a URL.
     */
    static LockException translate(String what, Throwable e) {
        if (e instanceof LockException l) {
            return l;
        }
        String state = e instanceof SQLException s && s.getSQLState() != null ? s.getSQLState() : "";
        String message = what + ": " + Redaction.redact(String.valueOf(e.getMessage()))
                + (state.isEmpty() ? "" : " (SQLSTATE " + state + ")");
        LockException.Reason reason;
        if (state.startsWith("28") || state.equals("42501")) {
            reason = LockException.Reason.ACCESS_DENIED;
        } else if (state.startsWith("08") || state.startsWith("57") || state.startsWith("53") || state.equals("40001")
                || state.equals("40P01") || state.equals("55P03") || e instanceof SQLTransientConnectionException
                || state.isEmpty() && e instanceof SQLException) {
            // connection errors, shutdown/cancel (statement_timeout), resources, serialization/deadlock, lock not available
            reason = LockException.Reason.UNAVAILABLE;
        } else {
            reason = LockException.Reason.PROTOCOL;
        }
        return new LockException(reason, message, e);
    }

    static LockException closedException() {
        return new LockException(LockException.Reason.CLOSED, "the lock client is closed");
    }

    /** Stops taking calls; calls in flight fail as the pool closes; grants are left to expire. */
    @Override
    public void close() {
        closed = true;
        threads.shutdownNow();
        timer.shutdownNow();
        pool.close();
    }
}
