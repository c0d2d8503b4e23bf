package dev.warden.lock.internal;

import java.util.HashMap;
import java.util.Map;

/**
 * The names a contender of the {@link LeaseCache} asked for within the last linger time: a name's next grant
 * in that window is not kept, so a busy client does not keep shutting out another that just waited (as the
 * mark a Redis contender's poll leaves does there; a contender queued on etcd or ZooKeeper left no such mark).
 *
 * <p>Concurrency: not thread-safe; the cache calls it with its monitor held.
 */
final class RecentContenders {

    /** Names remembered before older ones are looked for and forgotten. */
    private static final int REMEMBERED = 1024;

    private final long windowNanos;
    /** When a contender last asked for each name ({@code nanoTime}). */
    private final Map<String, Long> askedAtNanos = new HashMap<>();

    RecentContenders(long windowNanos) {
        this.windowNanos = windowNanos;
    }

    /** Whether a contender asked for {@code name} less than the window before {@code now}. */
    boolean asked(String name, long now) {
        Long at = askedAtNanos.get(name);
        return at != null && now - at < windowNanos;
    }

    /** A contender asked for {@code name} at {@code now}; what is older than the window goes once the map grows. */
    void remember(String name, long now) {
        askedAtNanos.put(name, now);
        if (askedAtNanos.size() > REMEMBERED) {
            askedAtNanos.values().removeIf(at -> now - at >= windowNanos);
        }
    }
}
