package dev.warden.lock.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.PhantomReference;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Reports a lease object that became unreachable while its hold was neither released nor lost: a
 * leak, logged with where it was acquired. Walking the caller's stack costs microseconds, so by
 * default only one acquisition in {@value #SAMPLE} records its site (like Netty's leak detector); every
 * dropped lease is still reported, with its lock and token. {@link #everySite} records them all. The lock is not released (a holder may still work
 * without a reference, and the keeper keeps renewing it until the client closes). Like Netty's
 * leak detector it has no thread of its own: the queue is polled whenever a lease is made and at
 * every renewal, which a leaked hold keeps doing.
 *
 * <p>Concurrency: the reference queue, the set and the counter are thread-safe; nothing else is mutable.
 */
final class LeakDetector {

    private static final Logger log = LoggerFactory.getLogger(LeakDetector.class);
    private static final int FRAMES = 8;
    /** One acquisition in this many records where it was made, by default. */
    static final int SAMPLE = 128;

    /** A dropped lease: its lock, token, and the caller's frames at the acquire. */
    record Leak(String name, long fencingToken, String acquiredAt) {
    }

    /** Where an acquisition was asked for: the caller's first frames outside lock-api (none when not sampled). */
    record AcquiredAt(List<StackWalker.StackFrame> frames) {

        static final AcquiredAt NOT_RECORDED = new AcquiredAt(List.of());

        /** lock-api's frames between the caller and this capture. */
        private static final Set<String> OURS = Set.of(AcquiredAt.class.getName(), LeakDetector.class.getName(),
                DefaultLock.class.getName(), LockAdapter.class.getName());

        static AcquiredAt here() {
            return new AcquiredAt(StackWalker.getInstance().walk(s -> s
                    .dropWhile(f -> OURS.contains(f.getClassName()))
                    .limit(FRAMES)
                    .toList()));
        }

        @Override
        public String toString() {
            if (frames.isEmpty()) {
                return "\t(not recorded: one acquisition in " + SAMPLE + " records its site)";
            }
            return frames.stream().map(f -> "\tat " + f).collect(Collectors.joining("\n"));
        }
    }

    private final ReferenceQueue<Object> queue = new ReferenceQueue<>();
    private final Set<Tracked> live = ConcurrentHashMap.newKeySet();
    private final Consumer<Leak> report;
    private final int sample;
    private final AtomicInteger acquisitions = new AtomicInteger();

    /** Records the site of one acquisition in {@value #SAMPLE}. */
    LeakDetector(Consumer<Leak> report) {
        this(report, SAMPLE);
    }

    private LeakDetector(Consumer<Leak> report, int sample) {
        this.report = report;
        this.sample = sample;
    }

    /** Records the site of every acquisition (tests, or chasing a leak). */
    static LeakDetector everySite(Consumer<Leak> report) {
        return new LeakDetector(report, 1);
    }

    /** Where the current acquisition is made, when this one is sampled. */
    AcquiredAt site() {
        return sample == 1 || acquisitions.incrementAndGet() % sample == 0 ? AcquiredAt.here() : AcquiredAt.NOT_RECORDED;
    }

    /** Logs each leak at warning level. */
    static LeakDetector logging() {
        return new LeakDetector(leak -> log.warn("a lease on lock '{}' (token {}) became unreachable while held; it stays"
                        + " held and renewed until its client closes. Release every lease. Acquired at:\n{}",
                leak.name(), leak.fencingToken(), leak.acquiredAt()));
    }

    /** Starts watching {@code lease}, a view of {@code held}; {@link Tracked#done()} when it is released. */
    Tracked track(Object lease, HeldLock held, AcquiredAt at) {
        poll();
        Tracked t = new Tracked(lease, queue, held, at);
        live.add(t);
        return t;
    }

    /** Reports the leases collected since the last poll whose holds are still held. */
    void poll() {
        Reference<?> r;
        while ((r = queue.poll()) != null) {
            Tracked t = (Tracked) r;
            if (live.remove(t) && t.held.isHeld()) {
                report.accept(new Leak(t.held.name(), t.held.token(), t.at.toString()));
            }
        }
    }

    /** One watched lease. */
    final class Tracked extends PhantomReference<Object> {

        private final HeldLock held;
        private final AcquiredAt at;

        private Tracked(Object lease, ReferenceQueue<Object> queue, HeldLock held, AcquiredAt at) {
            super(lease, queue);
            this.held = held;
            this.at = at;
        }

        /** The lease was released: nothing to report. */
        void done() {
            live.remove(this);
            clear();
        }
    }
}
