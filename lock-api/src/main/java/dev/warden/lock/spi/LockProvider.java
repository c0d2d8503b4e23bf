package dev.warden.lock.spi;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * Serves one backend; found with {@link java.util.ServiceLoader}. Exactly one provider may serve a
 * backend name: none or several is a configuration error, never a silent fallback.
 */
public interface LockProvider {

    /** The backend name configured as {@code warden.lock.backend}, e.g. {@code redis}. */
    String backend();

    /**
     * Backend option names this provider accepts, without the {@code warden.lock.<backend>.}
     * prefix. Any other key under that prefix is a configuration error.
     */
    default Set<String> optionNames() {
        return Set.of();
    }

    /**
     * The granularity of the backend's time to live (etcd leases are whole seconds). A configured
     * TTL that is not a multiple of it is a configuration error.
     */
    default Duration ttlGranularity() {
        return Duration.ofMillis(1);
    }

    /** Every problem this backend finds in the configuration, as messages; empty when it is fine. */
    default List<String> validate(LockConfig config) {
        return List.of();
    }

    /**
     * Connects.
     *
     * @throws dev.warden.lock.LockException {@code UNAVAILABLE} when the backend cannot be reached
     *         within the connect timeout
     */
    LockDriver open(LockConfig config);
}
