package dev.warden.lock.memory.internal;

/** A queue of contenders an attempt polls: a store's locks, or its shared names. */
interface MemoryQueue {

    /** Queues a contender for {@code key}; {@code wake} is told when polling again may grant. */
    MemoryStore.Ticket enqueue(String key, String owner, Runnable wake);

    /** Grants {@code ticket} if its turn has come; see {@link MemoryStore.Polled}. */
    MemoryStore.Polled poll(String key, MemoryStore.Ticket ticket, long ttlNanos);

    /** The contender gives up and leaves; those it held back are woken. */
    void leave(String key, MemoryStore.Ticket ticket);
}
