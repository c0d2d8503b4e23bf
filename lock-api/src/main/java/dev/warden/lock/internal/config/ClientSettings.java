package dev.warden.lock.internal.config;

import dev.warden.lock.spi.LockConfig;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * A client's validated settings: what its driver gets ({@link LockConfig}) and what only lock-api
 * uses.
 *
 * @param lock the settings every backend gets
 * @param outageTolerance how long an acquisition retries through failed calls before it fails
 *        with {@code UNAVAILABLE}; zero fails at the first
 * @param maxHoldTime the longest a lease is held, by default
 * @param fencingEpoch the high bits of every token this client's leases show ({@link dev.warden.lock.FencingEpoch})
 * @param leaseCache how long a released lock stays held for this client's next acquisition; zero: released at once
 */
public record ClientSettings(LockConfig lock, Duration outageTolerance, Optional<Duration> maxHoldTime, int fencingEpoch,
                             Duration leaseCache) {

    public static final Duration DEFAULT_OUTAGE_TOLERANCE = Duration.ofSeconds(30);

    public ClientSettings {
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(outageTolerance, "outageTolerance");
        Objects.requireNonNull(maxHoldTime, "maxHoldTime");
        Objects.requireNonNull(leaseCache, "leaseCache");
        if (fencingEpoch < 0 || fencingEpoch > dev.warden.lock.FencingEpoch.MAX_EPOCH) {
            throw new IllegalArgumentException("fencing epoch " + fencingEpoch + " is out of range");
        }
    }

    /** Without lease caching. */
    public ClientSettings(LockConfig lock, Duration outageTolerance, Optional<Duration> maxHoldTime, int fencingEpoch) {
        this(lock, outageTolerance, maxHoldTime, fencingEpoch, Duration.ZERO);
    }

    /** Epoch 0: tokens are the backend's own. */
    public ClientSettings(LockConfig lock, Duration outageTolerance, Optional<Duration> maxHoldTime) {
        this(lock, outageTolerance, maxHoldTime, 0);
    }

    /** Settings with lock-api's defaults around {@code lock}. */
    public static ClientSettings defaults(LockConfig lock) {
        return new ClientSettings(lock, DEFAULT_OUTAGE_TOLERANCE, Optional.empty());
    }
}
