package dev.warden.spring;

import dev.warden.lock.Lease;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The leases of the {@code @WithLock} methods running on each thread, innermost first. The thread's
 * entry is removed when its outermost method ends, so pooled threads keep nothing.
 */
final class LeaseStack {

    private static final ThreadLocal<Deque<Lease>> LEASES = new ThreadLocal<>();

    private LeaseStack() {
    }

    static Optional<Lease> current() {
        Deque<Lease> leases = LEASES.get();
        return leases == null ? Optional.empty() : Optional.ofNullable(leases.peek());
    }

    static void push(Lease lease) {
        Deque<Lease> leases = LEASES.get();
        if (leases == null) {
            leases = new ArrayDeque<>();
            LEASES.set(leases);
        }
        leases.push(lease);
    }

    static void pop() {
        Deque<Lease> leases = LEASES.get();
        if (leases != null) {
            leases.poll();
            if (leases.isEmpty()) {
                LEASES.remove();
            }
        }
    }
}
