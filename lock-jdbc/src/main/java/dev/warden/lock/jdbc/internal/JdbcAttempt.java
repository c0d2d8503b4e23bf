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
 * the server, so abandoning only stops the wait.
 */
final class JdbcAttempt extends QueryAttempt {

    JdbcAttempt(JdbcDriver driver, String name, String owner) {
        super(driver, name, owner, "lock '" + name + "'");
    }

    @Override
    CompletionStage<Optional<Grant>> send(long ttlMillis) {
        String namespace = driver.namespace();
        return driver.calls().call(acquiring(), c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.ACQUIRE)) {
                s.setString(1, owner);
                s.setLong(2, ttlMillis);
                s.setString(3, namespace);
                s.setString(4, name);
                s.setString(5, namespace);
                s.setString(6, name);
                s.setString(7, owner);
                s.setLong(8, ttlMillis);
                s.setString(9, namespace);
                s.setString(10, name);
                s.setString(11, namespace);
                s.setString(12, name);
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    long token = r.getLong(1);
                    if (!r.wasNull()) {
                        return Optional.<Grant>of(new JdbcGrant(namespace, name, owner, token));
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
