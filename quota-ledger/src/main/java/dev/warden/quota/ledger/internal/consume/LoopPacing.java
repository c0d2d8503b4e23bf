package dev.warden.quota.ledger.internal.consume;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The consumer loop's clock and brake: waits that end at once when the consumer is stopped, the
 * backoff between failed attempts, and listener calls that cannot break the loop.
 *
 * <p>{@code running} is volatile (set by the stopping thread, read by the loop); the latch is
 * thread-safe; the rest is immutable.
 */
public final class LoopPacing {

    private static final Logger log = LoggerFactory.getLogger(Logs.CONSUMER);

    private final Duration maxBackoff;
    private final CountDownLatch stopSignal = new CountDownLatch(1);
    private volatile boolean running = true;

    LoopPacing(Duration maxBackoff) {
        this.maxBackoff = maxBackoff;
    }

    boolean running() {
        return running;
    }

    /** Ends every wait at once; the loop sees {@link #running()} false. */
    void requestStop() {
        running = false;
        stopSignal.countDown();
    }

    /** The backoff after {@code backoff}: doubled, up to the maximum. */
    Duration next(Duration backoff) {
        Duration doubled = backoff.multipliedBy(2);
        return doubled.compareTo(maxBackoff) > 0 ? maxBackoff : doubled;
    }

    /** Waits {@code d}; throws {@link Stopped} when stopped meanwhile. */
    void pause(Duration d) {
        if (!sleep(d)) {
            throw new Stopped();
        }
    }

    /** Waits {@code d}; false when stopped (or interrupted) meanwhile. */
    boolean sleep(Duration d) {
        try {
            return !stopSignal.await(d.toNanos(), TimeUnit.NANOSECONDS) && running;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs a listener's hook; a listener that fails is logged, never the loop's end. */
    static void notify(Runnable hook) {
        try {
            hook.run();
        } catch (RuntimeException e) {
            log.warn("a ledger listener failed", e);
        }
    }

    /** Unwinds the loop when the consumer is stopped. */
    public static final class Stopped extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Stopped() {
            super(null, null, false, false);
        }
    }
}
