package dev.warden.lock.spi;

import dev.warden.lock.settings.SettingTable;

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
     * The backend's own settings ({@code warden.lock.<backend>.*}), each declared once with its meaning
     * and default: what {@link #optionNames()} accepts and what the reference documentation lists. None
     * by default.
     */
    default SettingTable settings() {
        return new SettingTable("warden.lock." + backend() + ".", "Locks: the " + backend() + " backend", List.of());
    }

    /**
     * Backend option names this provider accepts, without the {@code warden.lock.<backend>.}
     * prefix: those of {@link #settings()}. Any other key under that prefix is a configuration error.
     */
    default Set<String> optionNames() {
        return settings().names();
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
