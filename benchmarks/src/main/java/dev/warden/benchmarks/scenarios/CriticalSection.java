package dev.warden.benchmarks.scenarios;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a contended lock workload does while it holds the lock: proves no other thread is inside.
 * A baseline used wrongly (threads sharing an owner identity share the lock) fails here instead of
 * posting a fast, meaningless figure.
 */
final class CriticalSection {

    private final AtomicInteger inside = new AtomicInteger();

    void run() {
        if (inside.incrementAndGet() != 1) {
            inside.decrementAndGet();
            throw new IllegalStateException("two holders inside the critical section at once");
        }
        Thread.onSpinWait();
        inside.decrementAndGet();
    }
}
