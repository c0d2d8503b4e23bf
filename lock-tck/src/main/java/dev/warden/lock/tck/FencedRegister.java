package dev.warden.lock.tck;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A resource guarded by fencing (Kleppmann): it remembers the highest token it has seen and
 * rejects a write carrying a lower one, so a holder that was superseded cannot write.
 */
public final class FencedRegister {

    private long highest = Long.MIN_VALUE;
    private long value;
    private final AtomicLong rejected = new AtomicLong();

    /** Writes {@code newValue} if {@code token} is not lower than any token seen; returns whether it did. */
    public synchronized boolean write(long token, long newValue) {
        if (token < highest) {
            rejected.incrementAndGet();
            return false;
        }
        highest = token;
        value = newValue;
        return true;
    }

    public synchronized long value() {
        return value;
    }

    public synchronized long highestToken() {
        return highest;
    }

    /** How many writes were rejected as stale. */
    public long rejected() {
        return rejected.get();
    }
}
