package dev.warden.lock.internal;

import dev.warden.lock.Candidacy;
import dev.warden.lock.DistributedLock;
import dev.warden.lock.Election;
import dev.warden.lock.LeadershipListener;
import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReadWriteLock;
import dev.warden.lock.Semaphore;
import dev.warden.lock.internal.config.ClientSettings;
import dev.warden.lock.internal.config.LockNames;
import dev.warden.lock.internal.config.Settings;
import dev.warden.lock.internal.time.SystemTimekeeper;
import dev.warden.lock.internal.time.Timekeeper;
import dev.warden.lock.settings.LockSettings;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockDriver;
import dev.warden.lock.spi.Share;
import dev.warden.lock.spi.SharedLockDriver;
import dev.warden.lock.spi.TokenBlockDriver;
import dev.warden.lock.spi.TokenFloorDriver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A client over one driver: builds the {@link ClientParts} its acquisitions and leases work with,
 * owns their threads (keeper, events, callbacks) and closes everything in order. Concurrency: its
 * own fields are final or atomic; the registry is concurrent.
 */
final class DefaultLockClient implements LockClient {

    private static final Logger log = LoggerFactory.getLogger(DefaultLockClient.class);
    private static final AtomicInteger CLIENTS = new AtomicInteger();

    private final ClientParts parts;
    private final Runnable stopThreads;
    private final String clientId = UUID.randomUUID().toString();
    private final AtomicLong acquisitions = new AtomicLong();
    /** The candidacies of this client's elections, closed with it. */
    private final java.util.Set<Campaign> campaigns = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private DefaultLockClient(ClientParts parts, Runnable stopThreads) {
        this.parts = parts;
        this.stopThreads = stopThreads;
        parts.driver().onSessionLost(this::sessionLost);
    }

    /** A client on the system's clock, with its own keeper, event and callback threads. */
    static DefaultLockClient open(ClientSettings settings, LockDriver driver, LockObserver observer) {
        refuseCachingWithout(settings, driver);
        String prefix = "warden-" + settings.lock().backend() + "-";
        int n = CLIENTS.incrementAndGet();
        SystemTimekeeper time = new SystemTimekeeper(prefix + "keeper-" + n);
        Events events = Events.onThread(prefix + "events-" + n);
        // Asynchronous callers' continuations run here, never on a driver thread they could block.
        ExecutorService callbacks = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, prefix + "callbacks-" + n);
            t.setDaemon(true);
            return t;
        });
        // Once the client is closed the pool refuses tasks; an acquisition ended by the close (CLOSED) must still
        // reach its caller, so its continuation runs where it ended. Nothing can block there on a closed client:
        // every call on it ends at once with CLOSED.
        Executor callbackExecutor = task -> {
            try {
                callbacks.execute(task);
            } catch (RejectedExecutionException closed) {
                task.run();
            }
        };
        ClientParts parts = new ClientParts(settings, driver, leases(settings, driver, time), observer, time, events,
                callbackExecutor, new LocalQueue(),
                new Registry(), LeakDetector.logging());
        Duration wait = settings.lock().requestTimeout();
        return new DefaultLockClient(parts, () -> {
            callbacks.shutdown();
            try {
                events.shutdown(wait);
                time.shutdown(wait);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** A client on the given parts, for tests: a virtual clock, listeners on the caller's thread. */
    static DefaultLockClient open(ClientParts parts) {
        return new DefaultLockClient(parts, () -> { });
    }

    /** Parts for a test client over {@code driver}: {@code time}, and every task on the caller's thread. */
    static ClientParts testParts(ClientSettings settings, LockDriver driver, LockObserver observer, Timekeeper time,
                                 LeakDetector leaks) {
        return new ClientParts(settings, driver, leases(settings, driver, time), observer, time, Events.direct(),
                Runnable::run, new LocalQueue(),
                new Registry(), leaks);
    }

    /**
     * The driver, or with lease caching on, the cache over it.
     *
     * @throws LockException {@code CONFIGURATION} when caching is asked of a backend that cannot cache
     */
    private static LockDriver leases(ClientSettings settings, LockDriver driver, Timekeeper time) {
        refuseCachingWithout(settings, driver);
        return settings.leaseCache().isZero() ? driver
                : new LeaseCache((LeaseCachingDriver) driver, time, settings.leaseCache(), settings.lock().ttl());
    }

    /** @throws LockException {@code CONFIGURATION} when lease caching is asked of a backend that cannot cache */
    static void refuseCachingWithout(ClientSettings settings, LockDriver driver) {
        if (!settings.leaseCache().isZero() && !(driver instanceof LeaseCachingDriver
                && (driver instanceof TokenBlockDriver || driver instanceof TokenFloorDriver))) {
            throw new LockException(LockException.Reason.CONFIGURATION, "the " + settings.lock().backend()
                    + " backend cannot keep leases (" + LockSettings.LEASE_CACHE.key() + " " + settings.leaseCache()
                    + "): it cannot tell a client of contenders or reserve blocks of fencing tokens; set it to 0s");
        }
    }

    @Override
    public DistributedLock lock(String name) {
        LockNames.validate(name);
        parts.registry().ensureOpen();
        return new DefaultLock(this, parts, name, parts.settings().maxHoldTime());
    }

    @Override
    public Election election(String name) {
        DefaultElection.validate(name);
        parts.registry().ensureOpen();
        return new DefaultElection(this, parts, name);
    }

    /** Joins {@code election} (whose lock is {@code lock}); the candidacy is closed with the client. */
    Candidacy campaign(DefaultLock lock, String election, String candidateId, LeadershipListener listener) {
        parts.registry().ensureOpen();
        Campaign[] self = new Campaign[1];
        Campaign c = new Campaign(lock, parts, election, candidateId, listener, () -> campaigns.remove(self[0]));
        self[0] = c;
        campaigns.add(c);
        if (parts.registry().isClosed()) {
            campaigns.remove(c);
            throw new LockException(LockException.Reason.CLOSED, "the lock client is closed");
        }
        c.stand();
        return c;
    }

    @Override
    public Semaphore semaphore(String name, int permits) {
        DefaultSemaphore.validate(name, permits);
        parts.registry().ensureOpen();
        requireShared("semaphores");
        return new DefaultSemaphore(this, parts, name, permits);
    }

    @Override
    public ReadWriteLock readWriteLock(String name) {
        DefaultReadWriteLock.validate(name);
        parts.registry().ensureOpen();
        requireShared("read-write locks");
        return new DefaultReadWriteLock(this, parts, name);
    }

    private void requireShared(String what) {
        if (!(parts.driver() instanceof SharedLockDriver)) {
            // The migrating step's driver is the one without them: shares are not carried across a switch.
            throw new LockException(LockException.Reason.CONFIGURATION, "the " + parts.config().backend()
                    + " backend, as configured, offers no " + what + " (a client in the migrating step between"
                    + " two backends offers locks and elections only)");
        }
    }

    @Override
    public LockAdmin admin() {
        parts.registry().ensureOpen();
        return new DefaultLockAdmin(parts);
    }

    @Override
    public String backend() {
        return parts.config().backend();
    }

    /**
     * Starts an acquisition whose owner ends in {@code ownerSuffix} (an election's candidate id, or empty);
     * {@code reentryThread} is the blocking caller, null for asynchronous ones; {@code share} is what of a
     * shared name it asks for, null for a lock.
     */
    Acquisition startAcquisition(String name, Wait wait, Optional<Duration> maxHoldTime, Thread reentryThread,
                                 String ownerSuffix, Share share) {
        parts.registry().ensureOpen();
        Acquisition a = new Acquisition(parts, name, clientId + ":" + acquisitions.incrementAndGet() + ownerSuffix, wait,
                maxHoldTime, reentryThread, share, ownerSuffix.isEmpty());
        parts.registry().addPending(a);
        if (parts.registry().isClosed()) {
            parts.registry().removePending(a);
            throw new LockException(LockException.Reason.CLOSED, "the lock client is closed");
        }
        a.start();
        return a;
    }

    private void sessionLost(Throwable cause) {
        for (HeldLock h : parts.registry().held()) {
            h.markLost(LostReason.SESSION_LOST, cause);
        }
    }

    @Override
    public void close() {
        // Leaders step down as CLOSED (told so) before the client's own release would end their terms.
        for (Campaign c : List.copyOf(campaigns)) {
            c.close();
        }
        if (!parts.registry().close()) {
            return;
        }
        Duration timeout = parts.config().requestTimeout();
        LockException closing = new LockException(LockException.Reason.CLOSED, "the lock client was closed");
        List<Acquisition> stopped = parts.registry().pending();
        for (Acquisition a : stopped) {
            a.stop(closing);
        }
        // Stopped acquisitions complete exceptionally once cleaned up.
        Await.quietly(CompletableFuture.allOf(stopped.stream().map(a -> a.result).toArray(CompletableFuture[]::new)),
                timeout.multipliedBy(2));
        List<CompletableFuture<?>> releases = new ArrayList<>();
        if (parts.leases() instanceof LeaseCache cache) {
            // Kept holds are released, and held ones will not be kept.
            releases.add(cache.stopKeeping());
        }
        for (HeldLock h : parts.registry().held()) {
            releases.add(h.release(HeldLock.Holds.ALL, HeldLock.Releaser.CLOSING_CLIENT).whenComplete((outcome, error) -> {
                if (error != null) {
                    log.warn("could not release lock '{}' while closing; it expires within its TTL", h.name(), error);
                }
            }));
        }
        try {
            Await.quietly(CompletableFuture.allOf(releases.toArray(CompletableFuture[]::new)), timeout.multipliedBy(2));
            stopThreads.run();
        } finally {
            parts.driver().close();
        }
    }

    @Override
    public String toString() {
        return "LockClient[" + parts.config().backend() + ", "
                + Settings.masked(String.join(",", parts.config().endpoints())) + "]";
    }
}
