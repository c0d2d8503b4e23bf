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
 */
public record ClientSettings(LockConfig lock, Duration outageTolerance, Optional<Duration> maxHoldTime, int fencingEpoch) {

    public static final Duration DEFAULT_OUTAGE_TOLERANCE = Duration.ofSeconds(30);

    public ClientSettings {
        Objects.requireNonNull(lock, "lock");
        Objects.requireNonNull(outageTolerance, "outageTolerance");
        Objects.requireNonNull(maxHoldTime, "maxHoldTime");
        if (fencingEpoch < 0 || fencingEpoch > dev.warden.lock.FencingEpoch.MAX_EPOCH) {
            throw new IllegalArgumentException("fencing epoch " + fencingEpoch + " is out of range");
        }
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
