package dev.warden.lock.internal;

import dev.warden.lock.LockObserver;
import dev.warden.lock.internal.config.ClientSettings;
import dev.warden.lock.internal.time.Timekeeper;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;

import java.util.Objects;
import java.util.concurrent.CompletionStage;
import dev.warden.lock.spi.Grant;
import java.util.concurrent.Executor;

/**
 * Everything a client's acquisitions and leases work with, handed to them as one immutable value
 * when they are made, so they never call back into the client for its parts (as Curator's
 * {@code LockInternals} receives its client and driver).
 *
 * @param settings validated settings
 * @param driver the backend's driver
 * @param leases what locks' acquisitions and leases call: the driver, or the {@link LeaseCache} over it
 * @param observer the client's observer, shielded from its exceptions
 * @param time the one clock and timer of the client
 * @param events where lease-lost listeners run
 * @param callbacks where asynchronous callers' continuations run, never on a driver's thread
 * @param queue the client's local queue per lock name
 * @param registry what the client holds and waits for
 * @param leaks reports leases dropped while held
 */
record ClientParts(ClientSettings settings, LockDriver driver, LockDriver leases, LockObserver observer, Timekeeper time, Events events,
                   Executor callbacks, LocalQueue queue, Registry registry, LeakDetector leaks) {

    ClientParts {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(driver, "driver");
        Objects.requireNonNull(leases, "leases");
        Objects.requireNonNull(observer, "observer");
        Objects.requireNonNull(time, "time");
        Objects.requireNonNull(events, "events");
        Objects.requireNonNull(callbacks, "callbacks");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(leaks, "leaks");
    }

    /** Releases on the server now, even a lock the client would keep: a lost lease, a grant nobody will see. */
    CompletionStage<Boolean> releaseOnServer(Grant grant) {
        return leases instanceof LeaseCache cache ? cache.end(grant) : leases.release(grant);
    }

    LockConfig config() {
        return settings.lock();
    }
}
