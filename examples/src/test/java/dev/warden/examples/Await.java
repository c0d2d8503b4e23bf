package dev.warden.examples;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits on a condition with a deadline instead of sleeping a fixed time. */
public final class Await {

    private Await() {
    }

    /** Returns as soon as {@code condition} holds; fails naming {@code what} once {@code deadline} has passed. */
    public static void until(Duration deadline, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("not within " + deadline + ": " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
        }
    }
}
