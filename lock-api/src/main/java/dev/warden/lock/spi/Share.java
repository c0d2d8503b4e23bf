package dev.warden.lock.spi;

/**
 * What one contender for a shared name asks for: {@code weight} units, granted only while no more than
 * {@code limit} units are held or queued ahead of it together with its own. Semaphores ask for their
 * permits out of the permit count; a read-write lock's reader asks for {@link #READ}, its writer for
 * {@link #WRITE}, which fits only with nothing ahead of it.
 *
 * <p>The grant rule every {@link SharedLockDriver} applies, in arrival order on the server: an entry is
 * granted when the weights of every entry ahead of it (held or still waiting) plus its own weight are at
 * most its own limit. Strict arrival order is what keeps a writer or a request for many permits from
 * being starved by a stream of small requests; a request that does not fit holds back every later one.
 *
 * @param weight the units asked for, 1 to {@code limit}
 * @param limit the most units this contender lets be granted ahead of it together with its own
 */
public record Share(int weight, int limit) {

    /** A reader of a read-write lock: many at once, none beside a writer. */
    public static final Share READ = new Share(1, Integer.MAX_VALUE);

    /** A writer of a read-write lock: alone, after every entry ahead of it has gone. */
    public static final Share WRITE = new Share(Integer.MAX_VALUE, Integer.MAX_VALUE);

    public Share {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be positive, was " + limit);
        }
        if (weight < 1 || weight > limit) {
            throw new IllegalArgumentException("weight must be within 1.." + limit + ", was " + weight);
        }
    }

    /**
     * Whether this entry is granted, given the sum of the weights of every entry ahead of it in arrival
     * order (held or waiting). Sums are {@code long}s: a queue of many {@link #WRITE}s cannot overflow them.
     */
    public boolean fitsBehind(long weightAhead) {
        return weightAhead + weight <= limit;
    }
}
