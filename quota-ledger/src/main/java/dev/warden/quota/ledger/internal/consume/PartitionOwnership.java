package dev.warden.quota.ledger.internal.consume;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.quota.QuotaException.Reason;
import dev.warden.quota.QuotaException;
import dev.warden.quota.ledger.internal.store.PartitionFence;
import dev.warden.quota.redis.KeyLayout;
import dev.warden.quota.redis.QuotaConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which partitions one consumer drains. Each partition is owned through a Warden lock,
 * {@code ledger:<namespace:>group:p<N>}, so at most one consumer drains it at a time; the lease's
 * fencing token travels with every batch ({@link PartitionFence}). A consumer holds about its fair
 * share, {@code ceil(partitions / live consumers)}: it sheds the excess when consumers join and
 * takes free partitions when they leave or die (their leases expire).
 *
 * <p>Confined to the consumer's thread, except {@code lost}, which the leases' loss listeners
 * (Warden's event thread) add to.
 */
public final class PartitionOwnership {

    private static final Logger log = LoggerFactory.getLogger(PartitionOwnership.class);

    /**
     * The lock client a consumer makes when it is given none: the quota's {@code warden.lock.*}
     * settings, and without a backend Redis on the quota's endpoint, logged in as the quota's user.
     */
    public static LockClient defaultLocks(QuotaConfig config) {
        Map<String, Object> lockSettings = new HashMap<>(config.lockSettings());
        Object backend = lockSettings.putIfAbsent("warden.lock.backend", "redis");
        if ((backend == null || "redis".equals(String.valueOf(backend).trim())) && !lockSettings.containsKey("warden.lock.endpoints")) {
            lockSettings.put("warden.lock.endpoints", config.endpoint());
            // The quota's Redis user owns the partition locks too, unless the lock names its own.
            if (lockSettings.keySet().stream().noneMatch(k -> k.startsWith("warden.lock.redis.user") || k.startsWith("warden.lock.redis.pass"))) {
                config.redis().username().ifPresent(u -> lockSettings.put("warden.lock.redis.username", u));
                config.redis().password().ifPresent(p -> lockSettings.put("warden.lock.redis.password", p));
                config.redis().sentinelUsername().ifPresent(u -> lockSettings.put("warden.lock.redis.sentinel.username", u));
                config.redis().sentinelPassword().ifPresent(p -> lockSettings.put("warden.lock.redis.sentinel.password", p));
            }
        }
        try {
            return LockClient.create(lockSettings);
        } catch (LockException e) {
            Reason reason = switch (e.reason()) {
                case CONFIGURATION, NO_PROVIDER, AMBIGUOUS_PROVIDER -> Reason.CONFIGURATION;
                default -> Reason.LOCK_FAILED;
            };
            throw new QuotaException(reason, "cannot create the lock client that owns the ledger's partitions: "
                    + e.getMessage(), e);
        }
    }

    private final LockClient locks;
    private final String lockPrefix;
    private final List<Integer> candidates;
    /** Confined to the consumer's thread. */
    private final Map<Integer, Lease> owned = new TreeMap<>();
    /** Written by loss listeners, drained by the consumer's thread. */
    private final Set<Integer> lost = ConcurrentHashMap.newKeySet();

    public PartitionOwnership(LockClient locks, KeyLayout layout, String group, List<Integer> candidates) {
        this.locks = locks;
        this.lockPrefix = "ledger:" + layout.prefix() + group + ":p";
        this.candidates = List.copyOf(candidates);
    }

    String lockName(int partition) {
        return lockPrefix + partition;
    }

    /** The partitions held now, in order. */
    Set<Integer> partitions() {
        return owned.keySet();
    }

    /** The lease on a partition, or null when not held. */
    Lease lease(int partition) {
        return owned.get(partition);
    }

    /** Forgets the partitions whose leases were lost (expired, taken over, client closed); returns them. */
    List<Integer> dropLost() {
        List<Integer> dropped = new ArrayList<>();
        for (Map.Entry<Integer, Lease> e : List.copyOf(owned.entrySet())) {
            if (lost.remove(e.getKey()) || !e.getValue().isValid()) {
                release(e.getKey()); // a lost lease's release touches no newer holder, and frees it locally
                dropped.add(e.getKey());
            }
        }
        lost.clear();
        return dropped;
    }

    /** This consumer's fair share of the candidates among {@code live} consumers. */
    int share(int live) {
        int n = Math.max(1, live);
        return (candidates.size() + n - 1) / n;
    }

    /** Releases the partitions beyond {@code share}, highest first; returns them. */
    List<Integer> shed(int share) {
        List<Integer> released = new ArrayList<>();
        List<Integer> held = new ArrayList<>(owned.keySet());
        for (int i = held.size() - 1; i >= share; i--) {
            release(held.get(i));
            released.add(held.get(i));
        }
        return released;
    }

    /**
     * Tries (without waiting) to take free partitions until {@code share} are held, starting at
     * {@code offset} in the candidate list so that consumers starting together do not all race for
     * the same ones. A lock backend that fails leaves what is held as it is.
     */
    List<Integer> take(int share, int offset) {
        List<Integer> taken = new ArrayList<>();
        for (int i = 0; i < candidates.size() && owned.size() < share; i++) {
            int p = candidates.get(Math.floorMod(offset + i, candidates.size()));
            if (owned.containsKey(p)) {
                continue;
            }
            Optional<Lease> lease;
            try {
                lease = locks.lock(lockName(p)).tryAcquire(Duration.ZERO);
            } catch (LockException e) {
                log.warn("ledger: could not try the lock of partition {}: {}", p, e.getMessage());
                break;
            }
            if (lease.isPresent()) {
                Lease l = lease.get();
                int partition = p;
                l.onLost(event -> lost.add(partition));
                owned.put(p, l);
                taken.add(p);
            }
        }
        return taken;
    }

    /** Releases one partition (a failure to confirm is logged: the lock expires after its TTL). */
    void release(int partition) {
        Lease lease = owned.remove(partition);
        if (lease == null) {
            return;
        }
        try {
            lease.release();
        } catch (LockException e) {
            log.warn("ledger: could not release the lock of partition {}; it expires after its TTL: {}", partition,
                    e.getMessage());
        }
    }

    void releaseAll() {
        for (int p : List.copyOf(owned.keySet())) {
            release(p);
        }
    }
}
