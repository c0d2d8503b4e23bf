package dev.warden.spring;

/** What a {@link WithLock} method does when its lock is not free within the wait. */
public enum OnLockTimeout {
    /** Throw {@link LockTimeoutException}; the method does not run. */
    THROW,
    /**
     * Do not run the method and return an empty value: {@code null}, {@code Optional.empty()} (and the
     * primitive optionals' empties), or nothing for {@code void}. For work that another instance is
     * already doing, such as a scheduled job.
     */
    SKIP
}
