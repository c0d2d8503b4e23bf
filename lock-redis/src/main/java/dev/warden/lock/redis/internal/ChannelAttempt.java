package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a lock's {@link RedisAttempt} and a shared name's {@link SharedAttempt} do alike around their
 * script: a poll is refused once the driver closed or the attempt ended; a grant ends the wait; a poll
 * that does not grant notes how soon what it read may change on its own (a holder's or an entry ahead's
 * expiry), and {@link #changed()} waits ({@link ChannelWait}) for a message on the name's channel or
 * that long, at most a cap the attempt sets; an abandon stops listening first. Each attempt keeps its
 * own script, its reply and what an abandon leaves behind.
 *
 * <p>Concurrency: {@code expiresIn} and {@code cap} are guarded by {@code this}; the wait guards its own
 * state.
 */
abstract class ChannelAttempt implements LockAttempt {

    final RedisDriver driver;
    final String name;
    final ChannelWait wait;
    /** The name as messages say it: {@code lock 'x'}, {@code shared name 'x'}. */
    private final String what;

    /** Milliseconds until what the last poll read expires on its own; -1 when unknown. */
    private long expiresIn = -1;
    /** The longest wait for a message, in milliseconds. */
    private long cap;

    /** @param kind {@code lock} or {@code shared name}, for messages */
    ChannelAttempt(RedisDriver driver, String kind, String name, String channel, long cap) {
        this.driver = driver;
        this.name = name;
        this.what = kind + " '" + name + "'";
        this.wait = new ChannelWait(driver, channel, what);
        this.cap = cap;
    }

    /** Sends the attempt's script, once the driver is open and the attempt still polling. */
    abstract CompletionStage<Optional<Grant>> send(long ttlMillis);

    /** After the wait has stopped: removes what the attempt left on the server, if anything. */
    abstract CompletionStage<Void> leave();

    @Override
    public final CompletionStage<Optional<Grant>> poll(Duration ttl) {
        long ttlMillis = RedisDriver.ttlMillis(ttl);
        if (driver.isClosed()) {
            return CompletableFuture.failedFuture(ChannelWait.closedException());
        }
        if (!wait.polling()) {
            return CompletableFuture.failedFuture(new IllegalStateException("attempt on " + what + " has ended"));
        }
        return send(ttlMillis);
    }

    /** A poll granted {@code grant}: the wait ends. */
    final Optional<Grant> granted(Grant grant) {
        wait.end();
        return Optional.of(grant);
    }

    /** A poll did not grant; what it read expires on its own in {@code expiresInMillis} (-1: unknown). */
    final synchronized Optional<Grant> refused(long expiresInMillis) {
        expiresIn = expiresInMillis;
        return Optional.empty();
    }

    /** Sets the longest wait for a message from now on. */
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
