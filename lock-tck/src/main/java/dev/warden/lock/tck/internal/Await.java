package dev.warden.lock.tck.internal;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits on a condition with a deadline instead of sleeping a fixed time. */
public final class Await {

    private Await() {
    }

    /** Returns as soon as the condition holds; fails with {@code what} when the deadline passes first. */
    public static void until(Duration deadline, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("within " + deadline + ": " + what);
            }
            pause();
        }
    }

    /** Checks that the condition holds throughout {@code period}. */
    public static void during(Duration period, String what, BooleanSupplier condition) {
        during(period, what, condition, () -> null);
    }

    /** {@link #during(Duration, String, BooleanSupplier)}, adding {@code why} (when not null) to the failure. */
    public static void during(Duration period, String what, BooleanSupplier condition, Supplier<String> why) {
        long end = System.nanoTime() + period.toNanos();
        while (System.nanoTime() - end < 0) {
            if (!condition.getAsBoolean()) {
                String detail = why.get();
                throw new AssertionError("throughout " + period + ": " + what + (detail == null ? "" : "; " + detail));
            }
            pause();
        }
    }

    private static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
