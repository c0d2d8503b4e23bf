package dev.warden.lock.jdbc.internal;

import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Base64;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One client's listening connection: {@code LISTEN warden_lock} on a connection of its own, and the waits
 * registered per wake-up key. A notification wakes the waits of its key; a new connection (the first, or
 * one after the old broke) wakes every wait, since notifications sent meanwhile were lost. A connection
 * that breaks silently is found by a {@code SELECT 1} every second.
 *
 * <p>Concurrency: {@code waits} is a concurrent map of concurrent sets; {@code closed} and
 * {@code connection} are volatile; only the listener thread reads the connection's notifications.
 */
final class Notifications implements AutoCloseable {

    private final String url;
    private final Properties properties;
    private final Map<String, Set<JdbcWait>> waits = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean closed;
    private volatile Connection connection;

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

    private void wake(String key) {
        Set<JdbcWait> set = waits.get(key);
        if (set != null) {
            set.forEach(JdbcWait::message);
        }
    }

    private void wakeAll() {
        waits.values().forEach(set -> set.forEach(JdbcWait::message));
    }

    private void listen() {
        long backoff = 50;
        while (!closed) {
            try (Connection c = DriverManager.getConnection(url, properties)) {
                connection = c;
                try (Statement s = c.createStatement()) {
                    s.execute("LISTEN " + Statements.CHANNEL);
                }
                backoff = 50;
                wakeAll();
                PGConnection pg = c.unwrap(PGConnection.class);
                long lastCheck = System.nanoTime();
                while (!closed) {
                    PGNotification[] received = pg.getNotifications(250);
                    if (received != null) {
                        for (PGNotification n : received) {
                            wake(n.getParameter());
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
                // Waiters fall back on their timers meanwhile; a new connection wakes them all.
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException interrupted) {
                    return;
                }
                backoff = Math.min(1000, backoff * 2);
            } finally {
                connection = null;
            }
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
