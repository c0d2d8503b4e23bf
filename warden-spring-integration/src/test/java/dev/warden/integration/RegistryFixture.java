package dev.warden.integration;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What the registry tests stand on, for one backend: a namespace of each test's own, the test's client (the
 * "process" under test), clients of other "processes" on demand, all closed after the test; and waits on
 * conditions, each with a deadline.
 */
abstract class RegistryFixture {

    /** The longest any condition is waited for; a wait that runs out fails its test. */
    static final Duration PATIENCE = Duration.ofSeconds(20);

    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    private static final AtomicInteger TESTS = new AtomicInteger();

    private final List<LockClient> clients = new ArrayList<>();
    private String namespace;

    /** The test's own client: its registries are one process. */
    protected LockClient client;

    /** Backend and endpoints of the server under test. */
    protected abstract Map<String, Object> settings();

    /**
     * The lease TTL of every client: short, so what waits on a TTL stays short, yet long enough that a loaded 2-core
     * machine (servers, two test JVMs, another build) does not starve a keeper past it: at 2 s, a load of 8 on
     * 2 cores let an etcd lease expire.
     */
    protected Duration ttl() {
        return Duration.ofSeconds(3);
    }

    /**
     * The TTL of the client of a test that holds a lock past the TTL, kept by the keeper's renewals, or waits for a
     * renewal ({@link #newRegistry(Duration)}): those tests last a few TTLs, so theirs is short, 1 s (as in
     * warden-shedlock's kit; a renewal every 333 ms, a lease lost only when none gets through for about 650 ms).
     * They hold one lock and do little else; the busy tests (many clients, many threads) keep {@link #ttl()}.
     */
    protected Duration renewalTtl() {
        return Duration.ofSeconds(1);
    }

    /**
     * The TTL of the client that holds a lock through a server freeze ({@link #pauseServer()}): long enough that
     * the lease outlives a freeze of a few seconds, short enough that what an attempt left on the server during the
     * freeze is gone soon after it (the test waits for it). 6 s: the freeze on Redis lasts one request timeout
     * (2 s), and a lease renewed every 2 s, a failed renewal retried after 500 ms, outlives any freeze of up to
     * about 3.4 s (one starting right after the grant, as in the test, of up to about 5 s).
     */
    protected Duration outageTtl() {
        return Duration.ofSeconds(6);
    }

    /** Freezes the server (nothing answers, connections stay open); tests that need it are skipped where it cannot. */
    protected void pauseServer() {
        assumeTrue(false, "this backend's server cannot be paused");
    }

    /** Thaws what {@link #pauseServer()} froze. */
    protected void resumeServer() {
    }

    @BeforeEach
    void openClient(TestInfo test) {
        namespace = "si-" + getClass().getSimpleName().toLowerCase(Locale.ROOT).replace("lockregistrytest", "")
                + "-" + RUN + "-" + TESTS.incrementAndGet();
        client = newClient(Map.of());
    }

    /**
     * Closes the test's clients all at once, each on a thread of its own, and waits for every close: a ZooKeeper
     * client takes about 120 ms to close (the join of its I/O thread), and some tests open twenty clients. The first
     * failure is thrown, the others suppressed.
     */
    @AfterEach
    void closeClients() throws InterruptedException {
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<Thread> closing = new ArrayList<>();
        for (LockClient c : clients) {
            Thread t = new Thread(() -> {
                try {
                    c.close();
                } catch (Throwable e) {
                    failures.add(e);
                }
            }, "close-" + namespace + "-" + closing.size());
            t.start();
            closing.add(t);
        }
        clients.clear();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        for (Thread t : closing) {
            t.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            assertThat(t.isAlive()).as("%s still closing its client after %s", t.getName(), PATIENCE).isFalse();
        }
        if (!failures.isEmpty()) {
            AssertionError failed = new AssertionError("closing a client failed", failures.get(0));
            failures.stream().skip(1).forEach(failed::addSuppressed);
            throw failed;
        }
    }

    /** A client of another process, on the same server and namespace, with {@code overrides} on its settings. */
    protected LockClient newClient(Map<String, ?> overrides) {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl());
        // Connecting is not what these tests test: a loaded host can take seconds for a JVM's first connection.
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(20));
        s.putAll(overrides);
        LockClient c = LockClient.create(s);
        clients.add(c);
        return c;
    }

    /** A registry of this test's process. */
    protected WardenLockRegistry newRegistry() {
        return new WardenLockRegistry(client);
    }

    /** A registry over a client of its own (a process of its own) whose leases have the TTL {@code ttl}. */
    protected WardenLockRegistry newRegistry(Duration ttl) {
        return new WardenLockRegistry(newClient(Map.of("warden.lock.ttl", ttl)));
    }

    /** A registry of another process: its own client, so its holds are another owner's. */
    protected WardenLockRegistry registryOfAnotherProcess() {
        return new WardenLockRegistry(newClient(Map.of()));
    }

    /** Waits until {@code condition} holds; fails the test when {@link #PATIENCE} runs out first. */
    static void await(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waited %s for %s", PATIENCE, what).isNegative();
            pause();
        }
    }

    /** Waits until {@code lease} reads invalid: lost, or past its maximum hold time. */
    static void awaitLost(Lease lease) {
        await("the lease of '" + lease.name() + "' to be lost", () -> !lease.isValid());
    }

    /**
     * Keeps the current thread's hold for {@code duration} on the monotonic clock, checking all along that its
     * lease stays valid: what a test of renewal needs is time to pass, with the keeper (not the test) keeping the
     * lock.
     */
    static void holdValidFor(Lease lease, Duration duration) {
        long until = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() - until < 0) {
            assertThat(lease.isValid()).as("lease of '%s' valid while held", lease.name()).isTrue();
            pause();
        }
        assertThat(lease.isValid()).as("lease of '%s' valid after %s", lease.name(), duration).isTrue();
    }

    private static void pause() {
        try {
            Thread.sleep(5);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
