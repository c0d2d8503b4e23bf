package dev.warden.benchmarks.scenarios;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a semaphore or read-write workload does while it holds: proves the count holds (never more than
 * {@code limit} permit holders inside; never a reader beside a writer), so a baseline used wrongly fails
 * instead of posting a fast, meaningless figure.
 */
final class SharedSection {

    private final int limit;
    private final AtomicInteger inside = new AtomicInteger();
    private final AtomicInteger writers = new AtomicInteger();

    /** @param limit the most holders inside at once (readers: any number, so {@link Integer#MAX_VALUE}) */
    SharedSection(int limit) {
        this.limit = limit;
    }

    void hold() {
        int now = inside.incrementAndGet();
        try {
            if (now > limit || writers.get() > 0) {
                throw new IllegalStateException(now + " holders inside a section for " + limit + ", or one beside a writer");
            }
            Thread.onSpinWait();
        } finally {
            inside.decrementAndGet();
        }
    }

    void write() {
        if (writers.incrementAndGet() != 1 || inside.get() != 0) {
            writers.decrementAndGet();
            throw new IllegalStateException("a writer beside another holder");
        }
        Thread.onSpinWait();
        writers.decrementAndGet();
    }

    /** The section a recipe's workload checks: {@link WardenRecipe#PERMITS} holders, or readers and writers. */
    static SharedSection of(WardenRecipe.Recipe recipe) {
        return new SharedSection(recipe == WardenRecipe.Recipe.SEMAPHORE ? WardenRecipe.PERMITS : Integer.MAX_VALUE);
    }

    /** A writer's or a holder's turn inside. */
    void enter(boolean writer) {
        if (writer) {
            write();
        } else {
            hold();
        }
    }

    /** One thread in {@code every} of a read-write workload writes; the others read. */
    static boolean writes(int threadIndex, int every) {
        return threadIndex % every == 0;
    }
}
