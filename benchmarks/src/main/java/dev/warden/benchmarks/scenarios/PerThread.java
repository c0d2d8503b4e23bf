package dev.warden.benchmarks.scenarios;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * How evenly a contended lock served the threads, warm-up included: a lock that lets the thread that just
 * released it straight back in (while the others sleep between polls) posts a high rate and a low median
 * while starving the rest, and only the spread between threads shows it.
 */
final class PerThread {

    private AtomicLongArray acquisitions = new AtomicLongArray(0);

    void setUp(int threads) {
        acquisitions = new AtomicLongArray(threads);
    }

    void acquired(int thread) {
        acquisitions.incrementAndGet(thread);
    }

    /** "acquisitions per thread: fewest a, most b"; empty before a run. */
    String note() {
        if (acquisitions.length() == 0) {
            return "";
        }
        long fewest = Long.MAX_VALUE;
        long most = 0;
        for (int i = 0; i < acquisitions.length(); i++) {
            fewest = Math.min(fewest, acquisitions.get(i));
            most = Math.max(most, acquisitions.get(i));
        }
        return "acquisitions per thread: fewest " + fewest + ", most " + most;
    }

    /** {@code parts} joined by "; ", empty ones left out. */
    static String join(String... parts) {
        StringBuilder b = new StringBuilder();
        for (String p : parts) {
            if (p != null && !p.isEmpty()) {
                b.append(b.length() == 0 ? "" : "; ").append(p);
            }
        }
        return b.toString();
    }
}
