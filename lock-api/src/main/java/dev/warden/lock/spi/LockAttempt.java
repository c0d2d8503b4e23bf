package dev.warden.lock.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * One contender's attempt to take one lock, driven by lock-api's acquire loop: poll, and when not
 * granted wait for {@link #changed()}, then poll again; {@link #abandon()} when the caller gives up.
 * The loop never calls two methods of one attempt at the same time.
 *
 * <p>A poll that grants ends the attempt: the attempt stops watching on its own and the loop never
 * calls {@code abandon()} after it; the loop releases the grant itself if the caller gave up
 * meanwhile. A grant that reaches the driver after the stage already failed on its deadline is
 * invisible to the loop, so the driver releases it. When the driver closes, a pending
 * {@code changed()} fails with {@code LockException} reason {@code CLOSED}.
 */
public interface LockAttempt {

    /**
     * Tries to take the lock now. Redis: the acquire script; queue-based backends: whether this
     * attempt's entry is first.
     *
     * @param ttl the lease time to live to request
     * @return the grant, or empty when someone else holds the lock
     */
    CompletionStage<Optional<Grant>> poll(Duration ttl);

    /**
     * Completes when polling again is worthwhile: the holder released, or the entry ahead went
     * away, or a fallback backoff passed. Never busy-polls.
     */
    CompletionStage<Void> changed();

    /**
     * Gives up: removes anything this attempt left on the server (a queue entry) and stops
     * watching. Called once, after a poll that did not grant, when the caller times out or is
     * interrupted or cancelled, or when a call of this attempt failed and the loop is about to start
     * a new one. Never removes a granted lock: the loop releases grants itself.
     */
    CompletionStage<Void> abandon();
}
