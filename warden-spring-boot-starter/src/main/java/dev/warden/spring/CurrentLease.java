package dev.warden.spring;

import dev.warden.lock.Lease;

import java.util.Optional;

/**
 * The lease of the innermost {@link WithLock} method running on this thread. The lease is bound to
 * the thread only while the method runs; hand the {@link Lease} itself (a value) to other threads.
 */
public final class CurrentLease {

    private CurrentLease() {
    }

    /**
     * The lease of the innermost {@code @WithLock} method on this thread.
     *
     * @throws IllegalStateException when no {@code @WithLock} method is running on this thread
     */
    public static Lease get() {
        return LeaseStack.current().orElseThrow(() -> new IllegalStateException(
                "no @WithLock method is running on this thread"));
    }

    /** The lease of the innermost {@code @WithLock} method on this thread, if one is running. */
    public static Optional<Lease> find() {
        return LeaseStack.current();
    }
}
