package dev.warden.lock.jdbc.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a lock's {@link JdbcAttempt} and a shared name's {@link SharedAttempt} do alike around their statement:
 * a poll is refused once the driver closed or the attempt ended; a grant ends the wait; a poll that does not
 * grant notes how soon the holder ahead expires, and {@link #changed()} waits for a notification for the
 * name or that long, at most a cap; an abandon stops listening first, then removes what the attempt left.
 *
 * <p>Concurrency: {@code expiresIn} and {@code cap} are guarded by {@code this}; the wait guards its own
 * state; lock-api never calls two methods of one attempt at once.
 */
abstract class QueryAttempt implements LockAttempt {

    final JdbcDriver driver;
    final String name;
    final String owner;
    private final String what;
    private final JdbcWait wait;

    /** Milliseconds until the holder ahead expires, as the last poll read it; -1 when unknown. */
    private long expiresIn = -1;
    /** The longest wait without a notification, in milliseconds. */
    private long cap = 1000;

    /** @param what the name as messages say it: {@code lock 'x'}, {@code shared name 'x'} */
    QueryAttempt(JdbcDriver driver, String name, String owner, String what) {
        this.driver = driver;
        this.name = name;
        this.owner = owner;
        this.what = what;
        this.wait = driver.waitFor(name);
    }

    /** Runs the attempt's statement: a grant, or empty after {@link #refused}. */
    abstract CompletionStage<Optional<Grant>> send(long ttlMillis);

    /** After the wait stopped: removes what the attempt left on the server, if anything. */
    abstract CompletionStage<Void> leave();

    @Override
    public final CompletionStage<Optional<Grant>> poll(Duration ttl) {
        if (driver.calls().isClosed()) {
            return CompletableFuture.failedFuture(Calls.closedException());
        }
        if (!wait.polling()) {
            return CompletableFuture.failedFuture(new IllegalStateException("attempt on " + what + " has ended"));
        }
        return send(Math.max(1, ttl.toMillis())).thenApply(g -> {
            if (g.isPresent()) {
                wait.end();
            }
            return g;
        });
    }

    /** The statement's description for messages: {@code acquiring lock 'x'}. */
    final String acquiring() {
        return "acquiring " + what;
    }

    /** A poll did not grant; the holder ahead expires in {@code millis} (-1: none or unknown). */
    final synchronized Optional<Grant> refused(long millis) {
        expiresIn = millis;
        return Optional.empty();
    }

    /** Sets the longest wait without a notification from now on. */
    final synchronized void cap(long millis) {
        cap = millis;
    }

    @Override
    public final CompletionStage<Void> changed() {
        long delay;
        synchronized (this) {
            delay = expiresIn >= 0 ? Math.min(expiresIn + 1, cap) : cap;
        }
        return wait.changed(delay);
    }

    @Override
    public final CompletionStage<Void> abandon() {
        wait.end();
        return leave();
    }
}
