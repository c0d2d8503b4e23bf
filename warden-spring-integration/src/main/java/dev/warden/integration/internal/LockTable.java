package dev.warden.integration.internal;

import dev.warden.integration.WardenLock;
import dev.warden.lock.LockClient;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What a {@code WardenLockRegistry} keeps: a cache of its lock objects by name (least recently obtained first,
 * bounded, never dropping a lock some thread holds), and the holds its threads have, per name and thread, newest
 * first. The holds live here, not in the lock objects, so two objects for one name (one the cache dropped, one
 * obtained since) agree on who holds what.
 *
 * <p>Concurrency: the cache is guarded by its own monitor. The holds map changes only inside
 * {@link ConcurrentHashMap#compute} on its name, so a name is present exactly while some thread has a hold of it;
 * a thread's deque is only touched by that thread.
 */
public final class LockTable {

    private final LockClient client;
    private final LinkedHashMap<String, RegistryLock> cache = new LinkedHashMap<>(16, 0.75f, true);
    private final ConcurrentHashMap<String, ConcurrentHashMap<Thread, ArrayDeque<Hold>>> holds = new ConcurrentHashMap<>();
    private int capacity;

    public LockTable(LockClient client, int capacity) {
        this.client = Objects.requireNonNull(client, "client");
        this.capacity = requirePositive(capacity);
    }

    /**
     * The cached lock of {@code name}, or a new one, cached; dropping the least recently obtained locks that no
     * thread holds while the cache is over its capacity. Never refuses: when every cached lock is held, the cache
     * stays over its capacity until holds end.
     *
     * @throws IllegalArgumentException when {@code name} is not a valid Warden lock name
     */
    public WardenLock obtain(String name) {
        synchronized (cache) {
            RegistryLock lock = cache.get(name);
            if (lock == null) {
                lock = new RegistryLock(this, name, client.lock(name));
                cache.put(name, lock);
                trim(name);
            }
            lock.touch();
            return lock;
        }
    }

    /** Sets the capacity, dropping unheld locks at once while the cache is over it. */
    public void capacity(int capacity) {
        synchronized (cache) {
            this.capacity = requirePositive(capacity);
            trim(null);
        }
    }

    /**
     * Drops every cached lock that no thread holds and that was last obtained, acquired or released at least
     * {@code age} milliseconds ago (monotonic clock); a negative age drops every unheld lock.
     */
    public void expireUnusedOlderThan(long age) {
        long ageNanos = TimeUnit.MILLISECONDS.toNanos(age);
        long now = System.nanoTime();
        synchronized (cache) {
            cache.values().removeIf(lock -> !isHeld(lock.name()) && now - lock.lastUsed() >= ageNanos);
        }
    }

    /** The cached locks by name, least recently obtained first: a copy, for tests and diagnostics. */
    public Map<String, WardenLock> cached() {
        synchronized (cache) {
            return new LinkedHashMap<>(cache);
        }
    }

    /**
     * Checks that the current thread's newest hold of {@code name} is still valid and, when a maximum hold time
     * applies ({@code ttl}, else the one last set through the registry), moves it to that long from now.
     *
     * @throws IllegalMonitorStateException when the current thread holds no hold of {@code name}
     * @throws IllegalStateException when the hold's lease is no longer valid
     */
    public void renew(String name, Duration ttl) {
        Hold hold = newest(name);
        if (hold == null) {
            throw RegistryLock.notOwner(name);
        }
        Grant grant = hold.grant();
        Duration limit = ttl != null ? ttl : grant.limit();
        boolean held = hold.lease().isValid() && (limit == null || grant.limit(hold.lease(), limit));
        if (!held) {
            throw new IllegalStateException("Could not renew lock '" + name + "' (token " + grant.token()
                    + "): its lease had been lost" + grant.lossDetail());
        }
        synchronized (cache) {
            RegistryLock cached = cache.get(name);
            if (cached != null) {
                cached.touch();
            }
        }
    }

    /** Whether some thread holds {@code name} through this registry. */
    boolean isHeld(String name) {
        return holds.containsKey(name);
    }

    /** The current thread's newest hold of {@code name}, or null. */
    Hold newest(String name) {
        Map<Thread, ArrayDeque<Hold>> threads = holds.get(name);
        ArrayDeque<Hold> mine = threads == null ? null : threads.get(Thread.currentThread());
        return mine == null ? null : mine.peek();
    }

    /** Records a hold of the current thread. */
    void push(String name, Hold hold) {
        Thread me = Thread.currentThread();
        holds.compute(name, (n, threads) -> {
            ConcurrentHashMap<Thread, ArrayDeque<Hold>> map = threads == null ? new ConcurrentHashMap<>() : threads;
            map.computeIfAbsent(me, t -> new ArrayDeque<>()).push(hold);
            return map;
        });
    }

    /** Removes and returns the current thread's newest hold of {@code name}, or null when it has none. */
    Hold pop(String name) {
        Thread me = Thread.currentThread();
        Hold[] popped = new Hold[1];
        holds.computeIfPresent(name, (n, threads) -> {
            ArrayDeque<Hold> mine = threads.get(me);
            if (mine != null) {
                popped[0] = mine.poll();
                if (mine.isEmpty()) {
                    threads.remove(me);
                }
            }
            return threads.isEmpty() ? null : threads;
        });
        return popped[0];
    }

    /** Drops least recently obtained unheld locks, never {@code keep}, while the cache is over its capacity. */
    private void trim(String keep) {
        Iterator<Map.Entry<String, RegistryLock>> oldestFirst = cache.entrySet().iterator();
        while (cache.size() > capacity && oldestFirst.hasNext()) {
            String name = oldestFirst.next().getKey();
            if (!name.equals(keep) && !isHeld(name)) {
                oldestFirst.remove();
            }
        }
    }

    private static int requirePositive(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("cacheCapacity must be positive, was " + capacity);
        }
        return capacity;
    }
}
