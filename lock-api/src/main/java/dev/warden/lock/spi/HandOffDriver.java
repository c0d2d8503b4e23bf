package dev.warden.lock.spi;

import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A driver that can hand a lock on in one step: release a grant and grant the lock to a contender
 * waiting in the same client, with a new, higher fencing token, in one server operation (Redis: one
 * script). Drivers of queue-based backends do not implement it: a new queue entry would go to the
 * back, behind other clients' waiters. lock-api uses it when the driver is one; there is no flag.
 */
public interface HandOffDriver extends LockDriver {

    /**
     * Releases {@code grant} and, in the same atomic step, grants the lock to {@code owner}. When a
     * contender outside this client is waiting, the driver only releases (and wakes it), so
     * hand-offs never shut other clients out. Completes within the request timeout.
     */
    CompletionStage<HandOff> handOff(Grant grant, String owner, Duration ttl);
}
