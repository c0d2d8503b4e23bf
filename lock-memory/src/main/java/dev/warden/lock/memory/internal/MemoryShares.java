package dev.warden.lock.memory.internal;

import dev.warden.lock.spi.Share;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A store's shared names: per key, the contenders in arrival order, held or waiting, each with its share.
 * A contender is granted when the weights of every one ahead of it plus its own fit its limit
 * ({@link Share#fitsBehind}); tokens are given on arrival from one counter, so a grant's token exceeds
 * every earlier arrival's. A holder whose TTL passed stops counting, whether or not anyone looked.
 *
 * <p>Concurrency: every field, and the {@code granted}/{@code expiresAtNanos} of each ticket queued here,
 * is guarded by this object's monitor; wake-ups run outside it.
 */
final class MemoryShares implements MemoryQueue {

    private final Map<String, List<MemoryStore.Ticket>> queues = new HashMap<>();
    private long tokens;

    /** Not used: a shared contender arrives with its share ({@link #enqueue(String, String, Runnable, Share)}). */
    @Override
    public MemoryStore.Ticket enqueue(String key, String owner, Runnable wake) {
        throw new UnsupportedOperationException("a shared contender needs its share");
    }

    synchronized MemoryStore.Ticket enqueue(String key, String owner, Runnable wake, Share share) {
        MemoryStore.Ticket t = new MemoryStore.Ticket(owner, wake, share, ++tokens);
        queues.computeIfAbsent(key, k -> new ArrayList<>()).add(t);
        return t;
    }

    @Override
    public MemoryStore.Polled poll(String key, MemoryStore.Ticket ticket, long ttlNanos) {
        List<Runnable> wake;
        MemoryStore.Polled polled;
        synchronized (this) {
            List<MemoryStore.Ticket> queue = queues.get(key);
            if (queue == null || !queue.contains(ticket)) {
                throw new IllegalStateException("the contender for " + key + " is no longer queued");
            }
            long now = System.nanoTime();
            wake = purge(queue, now);
            long ahead = 0;
            long soonestExpiry = -1;
            for (MemoryStore.Ticket t : queue) {
                if (t == ticket) {
                    break;
                }
                ahead += t.share.weight();
                if (t.granted) {
                    long left = t.expiresAtNanos - now;
                    soonestExpiry = soonestExpiry < 0 ? left : Math.min(soonestExpiry, left);
                }
            }
            if (ticket.share.fitsBehind(ahead)) {
                ticket.granted = true;
                ticket.expiresAtNanos = now + ttlNanos;
                polled = new MemoryStore.Polled(new MemoryGrant(key, ticket.token, true), 0);
            } else {
                polled = new MemoryStore.Polled(null, soonestExpiry);
            }
        }
        // Expired holders were dropped: those behind them may fit now.
        wake.forEach(Runnable::run);
        return polled;
    }

    /** Compare-and-renew on the holder's token. */
    synchronized boolean renew(String key, long token, long ttlNanos) {
        MemoryStore.Ticket t = held(key, token, System.nanoTime());
        if (t == null) {
            return false;
        }
        t.expiresAtNanos = System.nanoTime() + ttlNanos;
        return true;
    }

    /** Compare-and-delete on the holder's token; those behind are woken. */
    boolean release(String key, long token) {
        MemoryStore.Ticket t;
        synchronized (this) {
            t = held(key, token, System.nanoTime());
        }
        if (t == null) {
            return false;
        }
        leave(key, t);
        return true;
    }

    @Override
    public void leave(String key, MemoryStore.Ticket ticket) {
        List<Runnable> wake = new ArrayList<>();
        synchronized (this) {
            List<MemoryStore.Ticket> queue = queues.get(key);
            if (queue == null || !queue.remove(ticket)) {
                return;
            }
            queue.forEach(t -> wake.add(t.wake));
            if (queue.isEmpty()) {
                queues.remove(key);
            }
        }
        wake.forEach(Runnable::run);
    }

    /** Whether anyone holds or waits for {@code key}: what a test reads "on the server". */
    synchronized boolean hasState(String key) {
        List<MemoryStore.Ticket> queue = queues.get(key);
        if (queue == null) {
            return false;
        }
        long now = System.nanoTime();
        return queue.stream().anyMatch(t -> !t.granted || now - t.expiresAtNanos < 0);
    }

    /** Called with the monitor held. */
    private MemoryStore.Ticket held(String key, long token, long now) {
        List<MemoryStore.Ticket> queue = queues.get(key);
        if (queue == null) {
            return null;
        }
        for (MemoryStore.Ticket t : queue) {
            if (t.token == token) {
                return t.granted && now - t.expiresAtNanos < 0 ? t : null;
            }
        }
        return null;
    }

    /** Called with the monitor held: drops expired holders and returns the wake-ups of those behind them. */
    private static List<Runnable> purge(List<MemoryStore.Ticket> queue, long now) {
        List<Runnable> wake = new ArrayList<>();
        boolean dropped = false;
        for (Iterator<MemoryStore.Ticket> it = queue.iterator(); it.hasNext(); ) {
            MemoryStore.Ticket t = it.next();
            if (t.granted && now - t.expiresAtNanos >= 0) {
                it.remove();
                dropped = true;
            }
        }
        if (dropped) {
            queue.forEach(t -> wake.add(t.wake));
        }
        return wake;
    }
}
