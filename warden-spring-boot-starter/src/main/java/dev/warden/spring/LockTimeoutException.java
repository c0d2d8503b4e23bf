package dev.warden.spring;

import dev.warden.lock.LockException;

import java.time.Duration;
import java.util.Objects;

/**
 * A {@link WithLock} method's lock was not free within its wait, so the method did not run. A
 * {@link LockException} with reason {@link LockException.Reason#TIMEOUT}: handlers of either type see it.
 */
public class LockTimeoutException extends LockException {

    private static final long serialVersionUID = 1L;

    private final String lockName;
    private final Duration wait;

    public LockTimeoutException(String lockName, Duration wait, String method) {
        super(Reason.TIMEOUT, "lock '" + lockName + "' was not free within " + wait.toMillis() + " ms; " + method
                + " did not run");
        this.lockName = Objects.requireNonNull(lockName, "lockName");
        this.wait = Objects.requireNonNull(wait, "wait");
    }

    /** The name the lock expression gave. */
    public String lockName() {
        return lockName;
    }

    /** The wait that ran out. */
    public Duration waited() {
        return wait;
    }
}
