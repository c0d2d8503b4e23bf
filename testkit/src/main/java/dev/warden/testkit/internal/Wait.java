package dev.warden.testkit.internal;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Polls a condition until it holds or a deadline passes: servers give no readiness callback. */
public final class Wait {

    private static final long POLL_MILLIS = 20;

    private Wait() {
    }

    /**
     * Returns {@code true} as soon as {@code condition} holds, {@code false} once {@code timeout} has
     * passed without it holding.
     */
    public static boolean until(Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.getAsBoolean()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting", e);
            }
        }
    }
}
