package dev.warden.lock.internal;

import dev.warden.lock.Lease;
import dev.warden.lock.Semaphore;
import dev.warden.lock.internal.config.LockNames;
import dev.warden.lock.spi.Share;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A semaphore: each request is a non-reentrant {@link DefaultLock} on the shared name
 * {@code semaphore:<name>} asking for its permits out of the count. Immutable.
 */
final class DefaultSemaphore implements Semaphore {

    /** The prefix of a semaphore's shared name. */
    static final String PREFIX = "semaphore:";

    private final DefaultLockClient client;
    private final ClientParts parts;
    private final String name;
    private final int permits;
    private final Optional<Duration> maxHoldTime;

    DefaultSemaphore(DefaultLockClient client, ClientParts parts, String name, int permits) {
        this(client, parts, name, permits, parts.settings().maxHoldTime());
    }

    private DefaultSemaphore(DefaultLockClient client, ClientParts parts, String name, int permits,
                             Optional<Duration> maxHoldTime) {
        this.client = client;
        this.parts = parts;
        this.name = name;
        this.permits = permits;
        this.maxHoldTime = maxHoldTime;
    }

    static void validate(String name, int permits) {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("a semaphore's name must not be empty");
        }
        LockNames.validate(PREFIX + name);
        if (permits < 1) {
            throw new IllegalArgumentException("a semaphore needs at least one permit, was " + permits);
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public Lease acquire() {
        return acquire(1);
    }

    @Override
    public Lease acquire(int n) {
        return request(n).acquire();
    }

    @Override
    public Optional<Lease> tryAcquire(Duration wait) {
        return tryAcquire(1, wait);
    }

    @Override
    public Optional<Lease> tryAcquire(int n, Duration wait) {
        return request(n).tryAcquire(wait);
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(int n) {
        return request(n).acquireAsync();
    }

    @Override
    public CompletableFuture<Lease> acquireAsync(int n, Duration wait) {
        return request(n).acquireAsync(wait);
    }

    @Override
    public Semaphore withMaxHoldTime(Duration maxHoldTime) {
        if (maxHoldTime == null || maxHoldTime.isNegative() || maxHoldTime.isZero()) {
            throw new IllegalArgumentException("maxHoldTime must be positive, was " + maxHoldTime);
        }
        return new DefaultSemaphore(client, parts, name, permits, Optional.of(maxHoldTime));
    }

    private DefaultLock request(int n) {
        if (n < 1 || n > permits) {
            throw new IllegalArgumentException("a request for " + n + " permits of semaphore '" + name
                    + "' must ask for 1.." + permits);
        }
        return new DefaultLock(client, parts, PREFIX + name, maxHoldTime, new Share(n, permits), false);
    }

    @Override
    public String toString() {
        return "Semaphore[" + name + ", " + permits + " permits" + maxHoldTime.map(d -> ", max hold " + d).orElse("") + "]";
    }
}
