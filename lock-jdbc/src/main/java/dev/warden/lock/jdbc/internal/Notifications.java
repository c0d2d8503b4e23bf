package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;
import org.postgresql.PGConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.postgresql.PGNotification;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One client's listening connection: {@code LISTEN warden_lock} and {@code LISTEN warden_lock_contender} on
 * a connection of its own, the waits registered per wake-up key, and the contender watches of the locks this
 * client keeps. A release's notification wakes the waits of its key; a contender's runs the watches of its key
 * (and is remembered for a while, for a watch registered just after it). A new connection (the first, or one
 * after the old broke) wakes every wait and runs every watch, since notifications sent meanwhile were lost. A
 * connection that breaks silently is found by a {@code SELECT 1} every second.
 *
 * <p>Concurrency: {@code waits} and {@code watches} are concurrent maps of concurrent sets, {@code contendedAt}
 * a concurrent map; {@code closed}, {@code connection} and {@code listeningSince} are volatile; only the
 * listener thread reads the connection's notifications.
 */
final class Notifications implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Notifications.class);

    /** Keys whose last contender is remembered before older ones are looked for and forgotten. */
    private static final int CONTENDERS_REMEMBERED = 1024;
    /** How long a contender's notification is remembered for a watch registered after it. */
    private static final long CONTENDER_MEMORY_NANOS = 60_000_000_000L;

    private final String url;
    private final Properties properties;
    private final Map<String, Set<JdbcWait>> waits = new ConcurrentHashMap<>();
    private final Map<String, Set<Runnable>> watches = new ConcurrentHashMap<>();
    /** When each key's last contender notification arrived ({@link System#nanoTime()}). */
    private final Map<String, Long> contendedAt = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile Connection connection;
    /** When the current connection started listening; 0 while there is none. */
    private volatile long listeningSince;
    /** Completes when the first connection listens. */
    private final CompletableFuture<Void> firstListening = new CompletableFuture<>();

    Notifications(String url, Properties properties) {
        this.url = url;
        this.properties = properties;
        this.thread = new Thread(this::listen, "warden-jdbc-listener");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * The payload a release of {@code name} in {@code namespace} notifies: a hash, so any name fits
     * PostgreSQL's payload limit; two names sharing one only wake each other's waiters needlessly.
     */
    static String key(String namespace, String name) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest((namespace + '\n' + name).getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(h).substring(0, 22);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    void join(String key, JdbcWait wait) {
        waits.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(wait);
    }

    void leave(String key, JdbcWait wait) {
        waits.computeIfPresent(key, (k, set) -> {
            set.remove(wait);
            return set.isEmpty() ? null : set;
        });
    }

    /**
     * Runs {@code asked} for every contender of {@code key} from now on, and at once when one may have asked
     * since {@code sinceNanos} already: its notification arrived since, or notifications could have been lost
     * since (no listening connection, or a new one). Closing the watch stops it.
     */
    ContenderWatch watchContenders(String key, long sinceNanos, Runnable asked) {
        Runnable once = asked::run;
        watches.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(once);
        Long at = contendedAt.get(key);
        long since = listeningSince;
        if ((at != null && at - sinceNanos >= 0) || since == 0 || since - sinceNanos > 0) {
            asked.run();
        }
        return () -> watches.computeIfPresent(key, (k, set) -> {
            set.remove(once);
            return set.isEmpty() ? null : set;
        });
    }

    private void wake(String key) {
        Set<JdbcWait> set = waits.get(key);
        if (set != null) {
            set.forEach(JdbcWait::message);
        }
    }

    private void contended(String key) {
        long now = System.nanoTime();
        contendedAt.put(key, now);
        if (contendedAt.size() > CONTENDERS_REMEMBERED) {
            contendedAt.values().removeIf(at -> now - at > CONTENDER_MEMORY_NANOS);
        }
        Set<Runnable> set = watches.get(key);
        if (set != null) {
            set.forEach(Notifications::ask);
        }
    }

    private void wakeAll() {
        waits.values().forEach(set -> set.forEach(JdbcWait::message));
        askAll();
    }

    /** Every kept lock's contenders may have asked unheard: each is let go of (at its release, when lent). */
    private void askAll() {
        watches.values().forEach(set -> set.forEach(Notifications::ask));
    }

    /** A watch's callback never breaks the listening loop. */
    private static void ask(Runnable asked) {
        try {
            asked.run();
        } catch (RuntimeException e) {
            log.warn("a contender watch failed; the listening connection goes on", e);
        }
    }

    private void listen() {
        long backoff = 50;
        while (!closed) {
            try (Connection c = DriverManager.getConnection(url, properties)) {
                connection = c;
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + Statements.CHANNEL);
                    s.execute("LISTEN " + Statements.CONTENDER_CHANNEL);
                }
                backoff = 50;
                listeningSince = System.nanoTime();
                firstListening.complete(null);
                wakeAll();
                PGConnection pg = c.unwrap(PGConnection.class);
                long lastCheck = System.nanoTime();
                while (!closed) {
                    PGNotification[] received = pg.getNotifications(250);
                    if (received != null) {
                        for (PGNotification n : received) {
                            if (Statements.CONTENDER_CHANNEL.equals(n.getName())) {
                                contended(n.getParameter());
                            } else {
                                wake(n.getParameter());
                            }
                        }
                    }
                    if (System.nanoTime() - lastCheck > 1_000_000_000L) {
                        try (Statement s = c.createStatement()) {
                            s.execute("SELECT 1");
                        }
                        lastCheck = System.nanoTime();
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (closed) {
                    return;
                }
                // Contenders' notifications go unheard until a new connection listens: kept locks are let go of
                // now, not when it comes back.
                listeningSince = 0;
                askAll();
                // Waiters fall back on their timers meanwhile; a new connection wakes them all.
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException interrupted) {
                    return;
                }
                backoff = Math.min(1000, backoff * 2);
            } finally {
                listeningSince = 0;
                connection = null;
            }
        }
    }

    /** Waits up to {@code limit} for the first connection to listen; returns either way (waiters have timers). */
    void awaitListening(Duration limit) {
        try {
            firstListening.get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Not listening yet: waiters poll on their timers, and kept holds are not kept, until it is.
        }
    }

    @Override
    public void close() {
        closed = true;
        Connection c = connection;
        if (c != null) {
            try {
                c.abort(Runnable::run);
            } catch (SQLException | RuntimeException ignored) {
                // closing anyway
            }
        }
        thread.interrupt();
        waits.values().forEach(set -> set.forEach(JdbcWait::closed));
    }
}
