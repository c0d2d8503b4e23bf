package dev.warden.lock.zookeeper.internal;

import org.apache.curator.RetryPolicy;
import org.apache.curator.RetrySleeper;
import org.apache.curator.retry.RetryUntilElapsed;

import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.Delayed;
import java.util.concurrent.TimeUnit;

/**
 * Curator's retry policy for the driver: an operation is retried until the request timeout has
 * elapsed, then given up once. An operation that asks again after it was refused is one Curator
 * resubmits by itself on giving up (the clean-up of a protected node whose create failed); while
 * the connection is down, refusing it again would make Curator resubmit it on the same stack, a
 * recursion that ends in a StackOverflowError after flooding the log. Such an operation is allowed
 * to wait for the connection instead, a retry every {@link #STRAGGLER_SLEEP_MS}, until the client
 * closes. Background operations are told apart by being {@link Delayed} (Curator queues them with
 * a delay); a foreground retry loop's sleeper is shared by every loop and always gives up once.
 *
 * <p>Concurrency: {@code refused} is guarded by its own monitor; operations are weakly held.
 */
final class RetryWithinDeadline implements RetryPolicy {

    static final long STRAGGLER_SLEEP_MS = 500;

    private final RetryUntilElapsed withinDeadline;
    private final Set<Object> refused = Collections.newSetFromMap(new WeakHashMap<>());

    RetryWithinDeadline(int requestTimeoutMs, int sleepMs) {
        this.withinDeadline = new RetryUntilElapsed(requestTimeoutMs, sleepMs);
    }

    @Override
    public boolean allowRetry(int retryCount, long elapsedTimeMs, RetrySleeper sleeper) {
        if (withinDeadline.allowRetry(retryCount, elapsedTimeMs, sleeper)) {
            return true;
        }
        if (!(sleeper instanceof Delayed)) {
            return false;
        }
        boolean askedBefore;
        synchronized (refused) {
            askedBefore = !refused.add(sleeper);
        }
        if (!askedBefore) {
            return false;
        }
        try {
            sleeper.sleepFor(STRAGGLER_SLEEP_MS, TimeUnit.MILLISECONDS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean allowRetry(Throwable exception) {
        return withinDeadline.allowRetry(exception);
    }
}
