package dev.warden.quota;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

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

    /** Calls {@code call} until it stops throwing {@link QuotaException} UNAVAILABLE (server still coming back). */
    static <T> T retryWhileUnavailable(Duration deadline, Supplier<T> call) {
        long end = System.nanoTime() + deadline.toNanos();
        while (true) {
            try {
                return call.get();
            } catch (QuotaException e) {
                if (e.reason() != QuotaException.Reason.UNAVAILABLE || System.nanoTime() - end > 0) {
                    throw e;
                }
                LockSupport.parkNanos(Duration.ofMillis(5).toNanos());
            }
        }
    }
}
