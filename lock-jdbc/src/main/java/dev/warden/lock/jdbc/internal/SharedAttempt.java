package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.Share;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender for a shared name: its entry waits in arrival order on the server
 * ({@code warden_lock_share}), and each poll (the function {@code warden_lock_share_poll}) refreshes it and
 * grants it when it fits behind those ahead. A waiting entry expires like a holder's, so a waiter polls at
 * least every fifth of the TTL (a second at most) to keep it, besides polling at a release's notification or
 * when the first holder ahead expires. Abandoning removes the entry and wakes those behind it.
 *
 * <p>Concurrency: {@code expiresIn} is guarded by {@code this}; the wait guards its own state; lock-api never
 * calls two methods of one attempt at once.
 */
final class SharedAttempt implements LockAttempt {

    private final JdbcDriver driver;
    private final String name;
    private final String owner;
    private final Share share;
    private final JdbcWait wait;
    private long expiresIn = -1;
    private long cap = 1000;

    SharedAttempt(JdbcDriver driver, String name, String owner, Share share) {
        this.driver = driver;
        this.name = name;
        this.owner = owner;
        this.share = share;
        this.wait = driver.waitFor(name);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        if (driver.calls().isClosed()) {
            return CompletableFuture.failedFuture(Calls.closedException());
        }
        if (!wait.polling()) {
            return CompletableFuture.failedFuture(new IllegalStateException("attempt on shared name '" + name + "' has ended"));
        }
        long ttlMillis = Math.max(1, ttl.toMillis());
        synchronized (this) {
            cap = Math.max(1, Math.min(1000, ttlMillis / 5));
        }
        return driver.calls().call("acquiring shared name '" + name + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.SHARE_POLL)) {
                s.setString(1, driver.namespace());
                s.setString(2, name);
                s.setString(3, owner);
                s.setLong(4, share.weight());
                s.setLong(5, share.limit());
                s.setLong(6, ttlMillis);
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    long token = r.getLong(1);
                    if (!r.wasNull()) {
                        return Optional.<Grant>of(new SharedGrant(driver.namespace(), name, owner, token));
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
            delay = expiresIn >= 0 ? Math.min(expiresIn + 1, cap) : cap;
        }
        return wait.changed(delay);
    }

    @Override
    public CompletionStage<Void> abandon() {
        wait.end();
        return driver.calls().call("leaving the queue of shared name '" + name + "'", c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.SHARE_ABANDON)) {
                s.setString(1, driver.namespace());
                s.setString(2, name);
                s.setString(3, owner);
                s.setString(4, Notifications.key(driver.namespace(), name));
                s.executeQuery().close();
            }
            return null;
        });
    }
}
