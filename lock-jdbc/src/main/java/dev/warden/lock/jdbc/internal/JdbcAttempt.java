package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender for one lock: a poll is the acquiring statement; between polls it waits for a
 * notification for the lock or, at most, until the holder's row expires on the database's clock (a
 * second at most, in case a notification was lost on a broken listening connection). Nothing is queued on
 * the server, so abandoning only stops the wait.
 *
 * <p>Concurrency: {@code expiresIn} is guarded by {@code this}; the wait guards its own state; lock-api never
 * calls two methods of one attempt at once.
 */
final class JdbcAttempt implements LockAttempt {

    /** The longest wait without a notification. */
    private static final long CAP_MILLIS = 1000;

    private final JdbcDriver driver;
    private final String name;
    private final String owner;
    private final JdbcWait wait;
    private long expiresIn = -1;

    JdbcAttempt(JdbcDriver driver, String name, String owner) {
        this.driver = driver;
        this.name = name;
        this.owner = owner;
        this.wait = driver.waitFor(name);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        if (driver.calls().isClosed()) {
            return CompletableFuture.failedFuture(Calls.closedException());
        }
        if (!wait.polling()) {
            return CompletableFuture.failedFuture(new IllegalStateException("attempt on lock '" + name + "' has ended"));
        }
        long ttlMillis = Math.max(1, ttl.toMillis());
        return driver.calls().call("acquiring lock '" + name + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.ACQUIRE)) {
                s.setString(1, owner);
                s.setLong(2, ttlMillis);
                s.setString(3, driver.namespace());
                s.setString(4, name);
                s.setString(5, driver.namespace());
                s.setString(6, name);
                s.setString(7, owner);
                s.setLong(8, ttlMillis);
                s.setString(9, driver.namespace());
                s.setString(10, name);
                s.setString(11, driver.namespace());
                s.setString(12, name);
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    long token = r.getLong(1);
                    if (!r.wasNull()) {
                        return Optional.<Grant>of(new JdbcGrant(driver.namespace(), name, owner, token));
                    }
                    long remaining = r.getLong(2);
                    noteExpiry(r.wasNull() ? -1 : Math.max(0, remaining));
                    return Optional.<Grant>empty();
                }
            }
        }, late -> late.ifPresent(driver::releaseQuietly)).thenApply(g -> {
            if (g.isPresent()) {
                wait.end();
            }
            return g;
        });
    }

    private synchronized void noteExpiry(long millis) {
        expiresIn = millis;
    }

    @Override
    public CompletionStage<Void> changed() {
        long delay;
        synchronized (this) {
            delay = expiresIn >= 0 ? Math.min(expiresIn + 1, CAP_MILLIS) : CAP_MILLIS;
        }
        return wait.changed(delay);
    }

    @Override
    public CompletionStage<Void> abandon() {
        wait.end();
        return CompletableFuture.completedFuture(null);
    }
}
