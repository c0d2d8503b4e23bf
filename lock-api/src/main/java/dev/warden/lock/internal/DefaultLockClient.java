package dev.warden.lock.internal;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.LockDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/** A client over one driver: owns the keeper thread, the event thread and every lease it grants. */
final class DefaultLockClient implements LockClient {

    private static final Logger log = LoggerFactory.getLogger(DefaultLockClient.class);
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final LockConfig config;
    private final LockDriver driver;
    private final LockObserver observer;
    private final String clientId = UUID.randomUUID().toString();
    private final AtomicLong acquisitions = new AtomicLong();
    private final ScheduledThreadPoolExecutor scheduler;
    private final ExecutorService events;
    private final ExecutorService callbacks;
    private final LocalQueue queue = new LocalQueue();
    private final Set<HeldLock> held = ConcurrentHashMap.newKeySet();
    private final Set<Acquisition> pending = ConcurrentHashMap.newKeySet();
    private final Map<ReentryKey, HeldLock> byThread = new ConcurrentHashMap<>();
    private final Map<ReentryKey, java.util.Deque<dev.warden.lock.Lease>> lockViewHolds = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    DefaultLockClient(LockConfig config, LockDriver driver, LockObserver observer) {
        this.config = config;
        this.driver = driver;
        this.observer = observer;
        int n = CLIENTS.incrementAndGet();
        scheduler = new ScheduledThreadPoolExecutor(1, daemon("warden-" + config.backend() + "-keeper-" + n));
        scheduler.setRemoveOnCancelPolicy(true);
        events = Executors.newSingleThreadExecutor(daemon("warden-" + config.backend() + "-events-" + n));
        // Asynchronous callers' continuations run here, never on a driver thread they could block.
        callbacks = Executors.newCachedThreadPool(daemon("warden-" + config.backend() + "-callbacks-" + n));
        driver.onSessionLost(this::sessionLost);
    }

    @Override
    public DistributedLock lock(String name) {
        LockNames.validate(name);
        ensureOpen();
        return new DefaultLock(this, name);
    }

    @Override
    public String backend() {
        return config.backend();
    }

    LockConfig config() {
        return config;
    }

    LockDriver driver() {
        return driver;
    }

    LockObserver observer() {
        return observer;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    ExecutorService events() {
        return events;
    }

    ExecutorService callbacks() {
        return callbacks;
    }

    boolean isClosed() {
        return closed.get();
    }

    /** The {@link java.util.concurrent.locks.Lock} views' holds, per lock name and thread. */
    Map<ReentryKey, java.util.Deque<dev.warden.lock.Lease>> lockViewHolds() {
        return lockViewHolds;
    }

    LocalQueue queue() {
        return queue;
    }

    Set<Acquisition> pending() {
        return pending;
    }

    void ensureOpen() {
        if (closed.get()) {
            throw new LockException(LockException.Reason.CLOSED, "the lock client is closed");
        }
    }

    /** Starts an acquisition; {@code reentryThread} is the blocking caller, null for async ones. */
    Acquisition startAcquisition(String name, long waitNanos, boolean bounded, Thread reentryThread) {
        ensureOpen();
        Acquisition a = new Acquisition(this, name, clientId + ":" + acquisitions.incrementAndGet(), waitNanos,
                bounded, reentryThread);
        pending.add(a);
        if (closed.get()) {
            pending.remove(a);
            throw new LockException(LockException.Reason.CLOSED, "the lock client is closed");
        }
        a.start();
        return a;
    }

    /** The lock the current thread already holds under {@code name}, with one more hold, if any. */
    HeldLock reenter(String name) {
        HeldLock h = byThread.get(new ReentryKey(name, Thread.currentThread()));
        return h != null && h.tryReenter() ? h : null;
    }

    void remember(HeldLock h) {
        held.add(h);
        if (h.reentryThread() != null) {
            byThread.put(new ReentryKey(h.name(), h.reentryThread()), h);
        }
        if (closed.get()) {
            h.releaseInBackground(true);
        }
    }

    void forget(HeldLock h) {
        held.remove(h);
        if (h.reentryThread() != null) {
            byThread.remove(new ReentryKey(h.name(), h.reentryThread()), h);
        }
    }

    private void sessionLost(Throwable cause) {
        for (HeldLock h : List.copyOf(held)) {
            h.markLost(LostReason.SESSION_LOST, cause);
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        LockException closing = new LockException(LockException.Reason.CLOSED, "the lock client was closed");
        List<Acquisition> stopped = new ArrayList<>(pending);
        for (Acquisition a : stopped) {
            a.stop(closing);
        }
        long deadline = System.nanoTime() + config.requestTimeout().toNanos() * 2;
        for (Acquisition a : stopped) {
            try {
                a.result.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (Exception expected) {
                // Stopped acquisitions complete exceptionally once cleaned up.
            }
        }
        List<CompletableFuture<?>> releases = new ArrayList<>();
        for (HeldLock h : List.copyOf(held)) {
            releases.add(h.releaseForClose().whenComplete((outcome, error) -> {
                if (error != null) {
                    log.warn("could not release lock '{}' while closing; it expires within its TTL", h.name(), error);
                }
            }));
        }
        try {
            CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new))
                    .get(Math.max(0, deadline - System.nanoTime()) + config.requestTimeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception reported) {
            // Each failed release was logged above.
        }
        scheduler.shutdownNow();
        callbacks.shutdown();
        events.shutdown();
        try {
            if (!events.awaitTermination(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                events.shutdownNow();
            }
            scheduler.awaitTermination(config.requestTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            driver.close();
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    record ReentryKey(String name, Thread thread) {
    }
}
