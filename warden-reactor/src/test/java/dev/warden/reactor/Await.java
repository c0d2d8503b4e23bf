package dev.warden.reactor;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits on a condition with a deadline instead of sleeping a fixed time. */
final class Await {

    private Await() {
    }

    static void until(Duration deadline, String what, BooleanSupplier condition) {
        long end = System.nanoTime() + deadline.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - end > 0) {
                throw new AssertionError("within " + deadline + ": " + what);
            }
            LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
        }
    }
}
