package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.Share;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One contender for a shared name: its entry waits in arrival order on the server
 * ({@code warden_lock_share}), and each poll (the function {@code warden_lock_share_poll}) refreshes it and
 * grants it when it fits behind those ahead. A waiting entry expires like a holder's, so a waiter polls at
 * least every fifth of the TTL (a second at most) to keep it, besides polling at a release's notification or
 * when the first holder ahead expires. Abandoning removes the entry and wakes those behind it.
 */
final class SharedAttempt extends QueryAttempt {

    private final Share share;

    SharedAttempt(JdbcDriver driver, String name, String owner, Share share) {
        super(driver, name, owner, "shared name '" + name + "'");
        this.share = share;
    }

    @Override
    CompletionStage<Optional<Grant>> send(long ttlMillis) {
        cap(Math.max(1, Math.min(1000, ttlMillis / 5)));
        String namespace = driver.namespace();
        return driver.calls().call(acquiring(), c -> {
            try (PreparedStatement s = c.prepareStatement(Statements.SHARE_POLL)) {
                s.setString(1, namespace);
                s.setString(2, name);
                s.setString(3, owner);
                s.setLong(4, share.weight());
                s.setLong(5, share.limit());
                s.setLong(6, ttlMillis);
                try (ResultSet r = s.executeQuery()) {
                    r.next();
                    long token = r.getLong(1);
                    if (!r.wasNull()) {
                        return Optional.<Grant>of(new SharedGrant(namespace, name, owner, token));
                    }
                    long remaining = r.getLong(2);
                    return refused(r.wasNull() ? -1 : Math.max(0, remaining));
                }
            }
        }, late -> late.ifPresent(driver::releaseQuietly));
    }

    @Override
    CompletionStage<Void> leave() {
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
