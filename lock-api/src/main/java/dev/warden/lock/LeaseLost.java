package dev.warden.lock;

import java.time.Instant;
import java.util.Optional;

/**
 * Tells a holder its lease is gone. Delivered once per listener, on Warden's event thread; a
 * listener added after the loss is told at once.
 *
 * @param name the lock name
 * @param fencingToken the token of the lease that was lost
 * @param reason why it was lost
 * @param cause the error behind it, when there was one
 * @param lastValidAt the moment until which the holder could still rely on the lease
 */
public record LeaseLost(String name, long fencingToken, LostReason reason, Optional<Throwable> cause,
                        Instant lastValidAt) {
}
