package dev.warden.lock.memory.internal;

import dev.warden.lock.spi.HolderListingDriver;
import dev.warden.lock.spi.HolderReadingDriver;
import dev.warden.lock.spi.Share;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The "server" of the in-memory backend: one per name ({@code memory://<name>}) and class loader,
 * shared by every client that names it. Per lock key it keeps the holder (owner, fencing token and
 * expiry on {@link System#nanoTime()}) and a queue of contenders in arrival order; the first
 * contender is granted once there is no live holder. Tokens come from one counter per store and
 * never go back, so they strictly increase per name. A holder whose TTL passed is gone, as a Redis
 * key that expired, whether or not anyone looked.
 *
 * <p>Concurrency: every field is guarded by the store's monitor. Wake-ups are callbacks that must
 * not block (attempts hand them to their driver's thread).
 */
public final class MemoryStore implements MemoryQueue {

    private static final ConcurrentMap<String, MemoryStore> STORES = new ConcurrentHashMap<>();

    /** The store named {@code name}, created on first use. */
    public static MemoryStore named(String name) {
        return STORES.computeIfAbsent(name, MemoryStore::new);
    }

    private final String name;
    private final Map<String, Lock> locks = new HashMap<>();
    private long tokens;
    /** Per lock key, the token of the last hold an operator ended. */
    private final Map<String, Long> evicted = new HashMap<>();
    /** The highest fencing epoch each namespace's clients used. */
    private final Map<String, Integer> epochs = new HashMap<>();
    /** Per lock key, what to tell when a contender queues for it (a client keeps the lock after release). */
    private final Map<String, List<Runnable>> contenderWatches = new HashMap<>();

    private MemoryStore(String name) {
        this.name = name;
    }

    /**
     * A contender in a queue; {@code wake} is told when the lock or the queue ahead changes. A shared
     * name's contender carries its share and the token it was given on arrival ({@link MemoryShares}).
     */
    static final class Ticket {
        final String owner;
        final Runnable wake;
        final Share share;
        final long token;
        /** Guarded by the monitor of the queue the ticket is in. */
        boolean granted;
        /** Guarded by the monitor of the queue the ticket is in. */
        long expiresAtNanos;

        Ticket(String owner, Runnable wake) {
            this(owner, wake, null, 0);
        }

        Ticket(String owner, Runnable wake, Share share, long token) {
            this.owner = owner;
            this.wake = wake;
            this.share = share;
            this.token = token;
        }
    }

    private final MemoryShares shares = new MemoryShares();

    /** The store's shared names (semaphores, read-write locks), apart from its locks. */
    MemoryShares shares() {
        return shares;
    }

    /** The outcome of a poll: a grant, or how long the live holder has left (-1: someone is ahead in the queue). */
    record Polled(MemoryGrant grant, long holderLeftNanos) {
    }

    private static final class Lock {
        final ArrayDeque<Ticket> queue = new ArrayDeque<>();
        String owner;
        long token;
        long expiresAtNanos;

        boolean held(long now) {
            return owner != null && now - expiresAtNanos < 0;
        }
    }

    @Override
    public Ticket enqueue(String key, String owner, Runnable wake) {
        Ticket t = new Ticket(owner, wake);
        List<Runnable> asked;
        synchronized (this) {
            locks.computeIfAbsent(key, k -> new Lock()).queue.add(t);
            asked = List.copyOf(contenderWatches.getOrDefault(key, List.of()));
        }
        asked.forEach(Runnable::run);
        return t;
    }

    /**
     * Tells {@code asked} of every contender that queues for {@code key} from now on, and at once when one
     * is queued already; the returned action stops it.
     */
    Runnable watchContenders(String key, Runnable asked) {
        boolean queued;
        synchronized (this) {
            contenderWatches.computeIfAbsent(key, k -> new ArrayList<>()).add(asked);
            Lock lock = locks.get(key);
            queued = lock != null && !lock.queue.isEmpty();
        }
        if (queued) {
            asked.run();
        }
        return () -> {
            synchronized (this) {
                List<Runnable> watches = contenderWatches.get(key);
                if (watches != null && watches.remove(asked) && watches.isEmpty()) {
                    contenderWatches.remove(key);
                }
            }
        };
    }

    /**
     * Grants when no live holder is left and {@code ticket} is first; the ticket leaves the queue with
     * the grant, and those still queued are woken to learn the new holder's expiry (an expiry is not
     * an event: a waiter's fallback timer covers it).
     */
    @Override
    public Polled poll(String key, Ticket ticket, long ttlNanos) {
        List<Runnable> wake;
        Polled polled;
        synchronized (this) {
            Lock lock = locks.get(key);
            if (lock == null || !lock.queue.contains(ticket)) {
                throw new IllegalStateException("the contender for " + key + " is no longer queued in store " + name);
            }
            long now = System.nanoTime();
            if (lock.held(now)) {
                return new Polled(null, lock.expiresAtNanos - now);
            }
            if (lock.queue.peek() != ticket) {
                return new Polled(null, -1);
            }
            lock.queue.poll();
            lock.owner = ticket.owner;
            lock.token = ++tokens;
            lock.expiresAtNanos = now + ttlNanos;
            polled = new Polled(new MemoryGrant(key, lock.token), 0);
            wake = new ArrayList<>(lock.queue.size());
            lock.queue.forEach(t -> wake.add(t.wake));
        }
        wake.forEach(Runnable::run);
        return polled;
    }

    /** Compare-and-renew: extends the holder's TTL if it is still {@code token}'s and live. */
    synchronized boolean renew(String key, long token, long ttlNanos) {
        Lock lock = locks.get(key);
        long now = System.nanoTime();
        if (lock == null || !lock.held(now) || lock.token != token) {
            return false;
        }
        lock.expiresAtNanos = now + ttlNanos;
        return true;
    }

    /**
     * While {@code token} holds the lock, makes every later token of the store exceed {@code floor}
     * (the counter is the store's, so it is every name's floor at once: tokens still only rise).
     */
    synchronized boolean raiseFloor(String key, long token, long floor) {
        Lock lock = locks.get(key);
        if (lock == null || !lock.held(System.nanoTime()) || lock.token != token) {
            return false;
        }
        tokens = Math.max(tokens, floor);
        return true;
    }

    /** The live holder of {@code key}, if any. */
    synchronized Optional<HolderReadingDriver.Holder> holder(String key) {
        Lock lock = locks.get(key);
        if (lock == null || !lock.held(System.nanoTime())) {
            return Optional.empty();
        }
        return Optional.of(new HolderReadingDriver.Holder(lock.owner, lock.token));
    }

    /** The live holders of every key that starts with {@code prefix}, by the rest of the key. */
    synchronized List<HolderListingDriver.NamedHolder> holders(String prefix) {
        long now = System.nanoTime();
        List<HolderListingDriver.NamedHolder> held = new ArrayList<>();
        locks.forEach((key, lock) -> {
            if (key.startsWith(prefix) && lock.held(now)) {
                held.add(new HolderListingDriver.NamedHolder(key.substring(prefix.length()),
                        new HolderReadingDriver.Holder(lock.owner, lock.token)));
            }
        });
        return held;
    }

    /** Ends the hold of {@code key} if its token is {@code token}, marks it evicted, and wakes the queue. */
    boolean evict(String key, long token) {
        return end(key, token, true);
    }

    /** Whether the last hold of {@code key} an operator ended had {@code token}. */
    synchronized boolean evicted(String key, long token) {
        Long last = evicted.get(key);
        return last != null && last == token;
    }

    /** The epoch recorded for {@code namespace} before; records {@code epoch} when it is higher. */
    synchronized int recordEpoch(String namespace, int epoch) {
        int recorded = epochs.getOrDefault(namespace, 0);
        if (epoch > recorded) {
            epochs.put(namespace, epoch);
        }
        return recorded;
    }

    /** Compare-and-delete: removes the holder if it is still {@code token}'s and live, and wakes the queue. */
    boolean release(String key, long token) {
        return end(key, token, false);
    }

    /** Ends the hold if it is still {@code token}'s and live (noting an eviction), and wakes the queue. */
    private boolean end(String key, long token, boolean evicting) {
        List<Runnable> wake;
        synchronized (this) {
            Lock lock = locks.get(key);
            if (lock == null || !lock.held(System.nanoTime()) || lock.token != token) {
                return false;
            }
            lock.owner = null;
            if (evicting) {
                evicted.put(key, token);
            }
            wake = wakeAll(key, lock);
        }
        wake.forEach(Runnable::run);
        return true;
    }

    /** A contender gives up: it leaves the queue, and those behind it are woken when it was first. */
    @Override
    public void leave(String key, Ticket ticket) {
        List<Runnable> wake = List.of();
        synchronized (this) {
            Lock lock = locks.get(key);
            if (lock == null) {
                return;
            }
            boolean first = lock.queue.peek() == ticket;
            lock.queue.remove(ticket);
            if (first) {
                wake = wakeAll(key, lock);
            } else {
                forgetIfIdle(key, lock);
            }
        }
        wake.forEach(Runnable::run);
    }

    /**
     * Whether the lock, or the shared name, of {@code key} has a live holder or anyone queued: what a
     * test reads "on the server".
     */
    public boolean hasState(String key) {
        synchronized (this) {
            Lock lock = locks.get(key);
            if (lock != null && (lock.held(System.nanoTime()) || !lock.queue.isEmpty())) {
                return true;
            }
        }
        return shares.hasState(key);
    }

    /** Called with the monitor held. */
    private List<Runnable> wakeAll(String key, Lock lock) {
        List<Runnable> wake = new ArrayList<>(lock.queue.size());
        lock.queue.forEach(t -> wake.add(t.wake));
        forgetIfIdle(key, lock);
        return wake;
    }

    /** Called with the monitor held: a lock with no live holder and no queue takes no memory (tokens live on). */
    private void forgetIfIdle(String key, Lock lock) {
        if (lock.queue.isEmpty() && !lock.held(System.nanoTime())) {
            locks.remove(key);
        }
    }

    @Override
    public String toString() {
        return "MemoryStore[" + name + "]";
    }
}
