package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender for one lock: a poll is the acquiring statement; between polls it waits for a
 * notification for the lock or, at most, until the holder's row expires on the database's clock (a
 * second at most, in case a notification was lost on a broken listening connection). Nothing is queued on
 * the server, so abandoning only stops the wait. On a table with the column {@code watched}, a grant marks
 * the row watched or not (the client may keep it after release), and a poll a watched holder refuses
 * notifies its contender channel.
 */
final class JdbcAttempt extends QueryAttempt {

    /** Whether this attempt's grant may be kept after release, so contenders must be reported. */
    private final boolean kept;

    JdbcAttempt(JdbcDriver driver, String name, String owner, boolean kept) {
        super(driver, name, owner, "lock '" + name + "'");
        this.kept = kept;
    }

    @Override
    CompletionStage<Optional<Grant>> send(long ttlMillis) {
        String namespace = driver.namespace();
        boolean watchable = driver.watchable();
        return driver.calls().call(acquiring(), c -> {
            long polledAt = System.nanoTime();
            try (PreparedStatement s = c.prepareStatement(watchable ? Statements.ACQUIRE_WATCHED : Statements.ACQUIRE)) {
                int i = 0;
                s.setString(++i, owner);
                s.setLong(++i, ttlMillis);
                if (watchable) {
                    s.setBoolean(++i, kept);
                }
                s.setString(++i, namespace);
                s.setString(++i, name);
                s.setString(++i, namespace);
                s.setString(++i, name);
                s.setString(++i, owner);
                s.setLong(++i, ttlMillis);
                if (watchable) {
                    s.setBoolean(++i, kept);
                }
                s.setString(++i, namespace);
                s.setString(++i, name);
                s.setString(++i, namespace);
                s.setString(++i, name);
                if (watchable) {
                    s.setString(++i, Notifications.key(namespace, name));
                    s.setString(++i, namespace);
                    s.setString(++i, name);
                }
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    long token = r.getLong(1);
                    if (!r.wasNull()) {
                        return Optional.<Grant>of(new JdbcGrant(namespace, name, owner, token, polledAt));
                    }
                    long remaining = r.getLong(2);
                    return refused(r.wasNull() ? -1 : Math.max(0, remaining));
                }
            }
        }, late -> late.ifPresent(driver::releaseQuietly));
    }

    @Override
    CompletionStage<Void> leave() {
        return CompletableFuture.completedFuture(null);
    }
}
