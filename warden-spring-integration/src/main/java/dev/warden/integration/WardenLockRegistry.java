package dev.warden.integration;

import dev.warden.integration.internal.LockTable;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import org.springframework.dao.CannotAcquireLockException;
import org.springframework.integration.support.locks.ExpirableLockRegistry;
import org.springframework.integration.support.locks.RenewableLockRegistry;
import org.springframework.scheduling.TaskScheduler;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Spring Integration's {@link org.springframework.integration.support.locks.LockRegistry} over any Warden backend
 * (Redis, etcd, ZooKeeper, memory), chosen by the {@link LockClient}'s configuration: for aggregators, resequencers,
 * {@code LockRegistryLeaderInitiator}, {@code LockRequestHandlerAdvice}, {@code executeLocked(..)} and any code that
 * takes a {@code LockRegistry}.
 *
 * <pre>{@code
 * LockRegistry<WardenLock> registry = new WardenLockRegistry(lockClient, "orders:");
 * WardenLock lock = registry.obtain(orderId);        // the Warden lock "orders:<orderId>"
 * lock.lock();
 * try {
 *     ledger.write(lock.lease().fencingToken(), entry);
 * } finally {
 *     lock.unlock();
 * }
 * }</pre>
 *
 * <p><b>Keys.</b> {@link #obtain(Object)} takes any non-null key and uses the Warden lock named
 * {@code prefix + key.toString()} ({@link #lockName(Object)}), in the client's namespace: keys whose
 * {@code toString()} are equal share a lock, in every process whose registry has the same prefix and whose client
 * the same namespace. The name must be a valid Warden lock name (at most 256 bytes of UTF-8, no control
 * characters), else {@code obtain} throws {@link IllegalArgumentException}.
 *
 * <p><b>The lock objects</b> are cached by name, so {@code obtain} returns the same object for a name while it is
 * cached. The cache holds at most {@link #setCacheCapacity(int) cacheCapacity} locks (default
 * {@value #DEFAULT_CACHE_CAPACITY}), dropping the least recently obtained ones no thread of this registry holds;
 * a held lock is never dropped, so when every cached lock is held the cache grows past its capacity until holds end
 * ({@code obtain} never refuses). {@link #expireUnusedOlderThan(long)} drops the unheld locks unused (not obtained,
 * acquired or released) for a while. The holds live in the registry, not in the lock objects: an object the cache
 * dropped keeps working and equals a newer one of the same name.
 *
 * <p><b>Who holds.</b> Warden's holds belong to a client and a thread: two registries over one {@code LockClient}
 * share their holds (a thread holding a name through one re-enters it through the other, without waiting), while
 * registries over two clients are two owners, like two processes. Spring's Redis registry makes every registry an
 * owner of its own.
 *
 * <p><b>Renewal.</b> Warden's lease keeper renews every held lock every TTL/3 ({@code warden.lock.ttl}) for as long
 * as it is held; a process that dies frees its locks within one TTL. {@link #renewLock(Object)} therefore sends
 * nothing: it checks that the hold is still valid and restarts a maximum hold time set through the registry.
 *
 * <p>The registry does not own the client: it never closes it. Thread-safe. The guide, with every difference from
 * Spring's own registries: {@code docs/spring-integration.md}.
 */
public final class WardenLockRegistry implements ExpirableLockRegistry<WardenLock>, RenewableLockRegistry<WardenLock> {

    /** How many lock objects the cache keeps by default (held locks are never dropped, whatever the capacity). */
    public static final int DEFAULT_CACHE_CAPACITY = 10_000;

    private final LockClient client;
    private final String prefix;
    private final LockTable table;

    /** A registry whose keys are lock names as they are ({@code key.toString()}). */
    public WardenLockRegistry(LockClient client) {
        this(client, "");
    }

    /**
     * A registry whose keys are lock names after {@code prefix}: {@code prefix + key.toString()}, e.g. the prefix
     * {@code "orders:"} keeps an aggregator's group ids apart from other locks of the client's namespace.
     */
    public WardenLockRegistry(LockClient client, String prefix) {
        this.client = Objects.requireNonNull(client, "client");
        this.prefix = Objects.requireNonNull(prefix, "prefix");
        this.table = new LockTable(client, DEFAULT_CACHE_CAPACITY);
    }

    /**
     * The lock of {@code lockKey}: the Warden lock {@link #lockName(Object) lockName(lockKey)}, the cached object when
     * there is one.
     *
     * @throws IllegalArgumentException when {@code lockKey} is null or its name is not a valid Warden lock name
     * @throws CannotAcquireLockException when the client is closed (its cause: Warden's {@code LockException},
     *         {@code CLOSED})
     */
    @Override
    public WardenLock obtain(Object lockKey) {
        String name = lockName(lockKey);
        try {
            return table.obtain(name);
        } catch (LockException e) {
            throw new CannotAcquireLockException("Cannot obtain lock '" + name + "' (" + e.reason() + "): "
                    + e.getMessage(), e);
        }
    }

    /**
     * The Warden lock name of {@code lockKey}: the registry's prefix followed by {@code lockKey.toString()}.
     *
     * @throws IllegalArgumentException when {@code lockKey} or its {@code toString()} is null
     */
    public String lockName(Object lockKey) {
        if (lockKey == null) {
            throw new IllegalArgumentException("lockKey must not be null");
        }
        String key = lockKey.toString();
        if (key == null) {
            throw new IllegalArgumentException("lockKey.toString() must not be null (" + lockKey.getClass() + ")");
        }
        return prefix + key;
    }

    /**
     * Sets how many lock objects the cache keeps; when it holds more, the least recently obtained unheld ones are
     * dropped at once. Held locks are never dropped.
     *
     * @throws IllegalArgumentException when {@code cacheCapacity} is not positive
     */
    public void setCacheCapacity(int cacheCapacity) {
        table.capacity(cacheCapacity);
    }

    /**
     * Drops from the cache every lock that no thread of this registry holds and that was last obtained, acquired or
     * released at least {@code age} milliseconds ago, on the monotonic clock; a zero or negative age drops every
     * unheld lock. The locks on the server are not touched: a held lock is never dropped, and an unheld one holds
     * nothing there.
     */
    @Override
    public void expireUnusedOlderThan(long age) {
        table.expireUnusedOlderThan(age);
    }

    /**
     * Confirms that the current thread's newest hold of {@code lockKey} is still valid. The lease keeper renews the
     * lease on its own, so nothing is sent to the server; a maximum hold time set through
     * {@link WardenLock#lock(Duration)}, {@link WardenLock#tryLock(Duration, Duration)} or
     * {@link #renewLock(Object, Duration)} restarts: it ends that long from now.
     *
     * @throws IllegalMonitorStateException when the current thread does not hold the lock through this registry
     * @throws IllegalStateException when the hold's lease is no longer valid (lost, or past its deadline)
     */
    @Override
    public void renewLock(Object lockKey) {
        table.renew(lockName(lockKey), null);
    }

    /**
     * Like {@link #renewLock(Object)}, and the hold's maximum hold time becomes {@code ttl} from now: when it passes,
     * the keeper stops renewing, releases the lock on the server and the lease reads lost ({@code MAX_HOLD_TIME}).
     * Reentrant holds share one lease, so they share this limit; {@link #renewLock(Object)} later restarts it.
     *
     * @throws IllegalArgumentException when {@code ttl} is null, zero or negative
     * @throws IllegalMonitorStateException when the current thread does not hold the lock through this registry
     * @throws IllegalStateException when the hold's lease is no longer valid (lost, or past its deadline)
     */
    @Override
    public void renewLock(Object lockKey, Duration ttl) {
        if (ttl == null || ttl.isZero() || ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must be positive, was " + ttl);
        }
        table.renew(lockName(lockKey), ttl);
    }

    /**
     * Ignored: Warden's lease keeper renews every held lock on the client's own threads, scheduler or not.
     *
     * @throws NullPointerException when {@code renewalTaskScheduler} is null (as Spring's registries refuse it)
     */
    @Override
    public void setRenewalTaskScheduler(TaskScheduler renewalTaskScheduler) {
        Objects.requireNonNull(renewalTaskScheduler, "renewalTaskScheduler");
    }

    /** The cached lock objects by name, least recently obtained first (a copy): for this package's tests. */
    Map<String, WardenLock> cachedLocks() {
        return table.cached();
    }

    @Override
    public String toString() {
        return "WardenLockRegistry[" + client.backend() + (prefix.isEmpty() ? "" : ", prefix '" + prefix + "'") + "]";
    }
}
