package dev.warden.lock.tck;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockObserver;
import org.junit.jupiter.api.AfterEach;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What every contract test stands on: how a backend is reached, and the plumbing its clauses share.
 * Each test works in a fresh namespace, so tests never see each other's locks, and every client,
 * thread pool and proxy a test creates is closed after it.
 */
public abstract class LockKit {

    // ----- what a backend says ------------------------------------------------------------------

    /** Settings that reach the backend directly: at least backend and endpoints. */
    protected abstract Map<String, Object> settings();

    /** Whether the backend holds, or has queued, anything for this lock (read directly, not through Warden). */
    protected abstract boolean hasServerState(String namespace, String name);

    /** The short TTL the kit uses; a backend with coarse leases (etcd: whole seconds) raises it. */
    protected Duration ttl() {
        return Duration.ofSeconds(1);
    }

    /** How long a kit client may take to connect. */
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(20);

    /** Time for scheduling noise on a loaded machine; added to every bound the kit waits on. */
    protected Duration slack() {
        return Duration.ofSeconds(2);
    }

    /**
     * Whether {@code Election.leader()} shows the leader's own term exactly. The migrating step raises
     * the token floors of etcd and ZooKeeper, which a holder read adds to the entry's revision after the
     * grant: there it shows a term at least the leader's, never below.
     */
    protected boolean observedTermExact() {
        return true;
    }

    /**
     * Whether the kit's user may list the namespace's holders (a Redis user holding only the minimal ACL of
     * a lock-only user may not: listing needs {@code +scan}, an operator's right).
     */
    protected boolean canListHolders() {
        return true;
    }

    /** Whether the client offers semaphores and read-write locks (not in the migrating step of a switch). */
    protected boolean offersSharedRecipes() {
        return true;
    }

    /** Whether an operator can force-release a hold here (not in the migrating step of a switch). */
    protected boolean canForceRelease() {
        return true;
    }

    /** Runs before each test's clients are closed: a fault kit undoes its faults here. */
    protected void undoFaults() {
    }

    // ----- plumbing -----------------------------------------------------------------------------

    private final String namespace = "tck-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new CopyOnWriteArrayList<>();
    private int names;

    @AfterEach
    void closeEverything() throws Exception {
        undoFaults();
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    /** This test's namespace. */
    protected String namespace() {
        return namespace;
    }

    /** Closed after the test, newest first. */
    protected <T extends AutoCloseable> T closeAfter(T closeable) {
        closeAfter.add(closeable);
        return closeable;
    }

    /** A new independent client (its own connections, as another process would have). */
    protected LockClient client(Object... overrides) {
        return client(settings(), LockObserver.NONE, overrides);
    }

    /** A new independent client whose grants, renewals, releases and losses {@code observer} sees. */
    protected LockClient observedClient(LockObserver observer, Object... overrides) {
        return client(settings(), observer, overrides);
    }

    /**
     * A client on {@code base} settings in this test's namespace, with the kit's TTL and timeouts;
     * {@code overrides} are pairs of setting names without {@code warden.lock.} and values.
     */
    protected LockClient client(Map<String, Object> base, LockObserver observer, Object... overrides) {
        Map<String, Object> s = new LinkedHashMap<>(base);
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl());
        s.put("warden.lock.request-timeout", Duration.ofMillis(500));
        // Connecting is not what the kit tests (the outage clauses that do set their own): a loaded CI host was
        // seen to take over 4 s to connect a client to a Sentinel or Cluster deployment.
        s.put("warden.lock.connect-timeout", CONNECT_TIMEOUT);
        for (int i = 0; i < overrides.length; i += 2) {
            s.put("warden.lock." + overrides[i], overrides[i + 1]);
        }
        return closeAfter(LockClient.create(s, observer));
    }

    /** The settings of {@link #client}, in this namespace, with no overrides (and the product's request timeout). */
    protected Map<String, Object> withNamespace() {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl());
        s.put("warden.lock.connect-timeout", CONNECT_TIMEOUT); // as every other client of the kit: see #client
        return s;
    }

    /** A fresh lock name, with non-ASCII characters so every backend's encoding is exercised. */
    protected String newName() {
        return "lock-" + (++names) + "-é锁";
    }

    protected boolean onServer(String name) {
        return hasServerState(namespace, name);
    }

    /**
     * How long the client under test may keep a released lock on the server for its own next acquisition
     * ({@code warden.lock.lease-cache}); zero, the default, when it releases at once. The kit's mode with
     * leases kept overrides it.
     */
    protected Duration keptFor() {
        return Duration.ZERO;
    }

    /**
     * With leases kept: whether the first release of each server grant asks the server, as a backend whose
     * grants reserve no tokens does (the client reserves its block then, through the token floor), so a grant
     * lost behind the client's back reads {@code LOST} there and is not kept. False, the default, for a backend
     * whose grants reserve their own block (Redis), whose kept hold learns of such a loss at its next renewal.
     */
    protected boolean keptReleaseAsksServer() {
        return false;
    }

    /**
     * Whether nothing of {@code name} is left on the server: at once when leases are not kept, else once the
     * kept hold has been let go (within {@link #keptFor()}, at most a third of the TTL, and the slack).
     */
    protected boolean freed(String name) {
        if (keptFor().isZero() || !onServer(name)) {
            return !onServer(name);
        }
        long end = System.nanoTime() + keptFor().plus(slack()).toNanos();
        while (onServer(name) && System.nanoTime() - end < 0) {
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return !onServer(name);
    }

    protected ExecutorService threads(int n) {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        closeAfter.add(pool::shutdownNow);
        return pool;
    }

    protected Duration renewInterval() {
        return ttl().dividedBy(3);
    }

    /**
     * The TTL of a holder in another process the kit starts (a fresh JVM): twice {@link #ttl()}. A fresh JVM
     * loads and compiles its renewal path (and, on a secure etcd, authenticates again) while its first renewals
     * are due; at the kit's shortest TTL a live holder process was seen to lose its lease, and a clause then read
     * it as dead. The clauses that kill or freeze such a holder wait on this TTL.
     */
    protected Duration processTtl() {
        return ttl().multipliedBy(2);
    }

    /** The lease's loss, once it is told. */
    protected static AtomicReference<LeaseLost> watch(Lease lease) {
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        lease.onLost(lost::set);
        return lost;
    }
}
