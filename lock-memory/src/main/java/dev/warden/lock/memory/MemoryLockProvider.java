package dev.warden.lock.memory;

import dev.warden.lock.LockException;
import dev.warden.lock.memory.internal.Endpoints;
import dev.warden.lock.memory.internal.MemoryDriver;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.LockProvider;

import java.util.List;

/**
 * The {@code memory} backend: locks held in this JVM's memory, for tests and for code that runs in
 * one JVM. <b>It is never a distributed lock</b>: two processes (or two class loaders) each have
 * their own locks and never see each other's.
 *
 * <p>Endpoint {@code memory://<store>}: clients that name the same store share its locks, as
 * clients of one server do; another name is another, independent "server". It runs the same code
 * paths as the server backends — lock-api's acquire loop, local queue, lease keeper, reentrancy,
 * listeners — over the same driver SPI, and passes the same core contract: fencing tokens that
 * strictly increase per name (one counter per store), TTLs on the system's monotonic clock that
 * expire a holder that stops renewing, a first-come queue per lock across clients, and losses
 * (a renewal after the TTL finds the lock gone). There are no faults to inject, no sessions and no
 * options; a store lives as long as the class that holds it.
 */
public final class MemoryLockProvider implements LockProvider {

    @Override
    public String backend() {
        return "memory";
    }

    @Override
    public List<String> validate(LockConfig config) {
        return Endpoints.problems(config.endpoints());
    }

    /** @throws LockException {@code CONFIGURATION} when {@link #validate} finds problems */
    @Override
    public LockDriver open(LockConfig config) {
        List<String> problems = validate(config);
        if (!problems.isEmpty()) {
            throw new LockException(LockException.Reason.CONFIGURATION,
                    "invalid memory lock configuration:\n  - " + String.join("\n  - ", problems));
        }
        return MemoryDriver.open(config);
    }
}
