package dev.warden.lock.spi;

import java.util.Objects;

/**
 * What a {@link HandOffDriver#handOff hand-off} did: one of three outcomes, each its own type, so a
 * caller cannot read a grant that was not made.
 */
public sealed interface HandOff permits HandOff.To, HandOff.ReleasedOnly, HandOff.NotOwner {

    /** The old grant was released and, in the same step, the lock granted to the next owner. */
    record To(Grant next) implements HandOff {
        public To {
            Objects.requireNonNull(next, "next");
        }
    }

    /** The old grant was released and the lock left free (a contender outside the client waits). */
    record ReleasedOnly() implements HandOff {
    }

    /** The lock was no longer the old grant's; nothing was changed. */
    record NotOwner() implements HandOff {
    }

    /** The lock went straight from the old grant to {@code next}. */
    static HandOff to(Grant next) {
        return new To(next);
    }

    /** The old grant was released and the lock left free. */
    static HandOff releasedOnly() {
        return new ReleasedOnly();
    }

    /** The lock was no longer the old grant's. */
    static HandOff notOwner() {
        return new NotOwner();
    }
}
