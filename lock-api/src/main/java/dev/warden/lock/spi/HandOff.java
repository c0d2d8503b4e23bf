package dev.warden.lock.spi;

import java.util.Objects;
import java.util.Optional;

/**
 * What a {@link LockDriver#handOff hand-off} did: released the old grant and granted the lock to
 * the next owner, only released it, or found it no longer the old grant's (nothing changed).
 *
 * @param released whether the old grant was still held and is now released
 * @param granted the next owner's grant, when the lock went straight to it
 */
public record HandOff(boolean released, Optional<Grant> granted) {

    public HandOff {
        Objects.requireNonNull(granted, "granted");
        if (granted.isPresent() && !released) {
            throw new IllegalArgumentException("a lock that was not released cannot be handed on");
        }
    }

    /** The lock went straight from the old grant to {@code next}. */
    public static HandOff to(Grant next) {
        return new HandOff(true, Optional.of(next));
    }

    /** The old grant was released and the lock left free (someone outside the client waits). */
    public static HandOff releasedOnly() {
        return new HandOff(true, Optional.empty());
    }

    /** The lock was no longer the old grant's; nothing was changed. */
    public static HandOff notOwner() {
        return new HandOff(false, Optional.empty());
    }
}
