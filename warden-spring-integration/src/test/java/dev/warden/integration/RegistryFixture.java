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
     * The TTL of the client that holds a lock through a server freeze ({@link #pauseServer()}): long enough that
     * the lease outlives a freeze of a few seconds, short enough that what an attempt left on the server during the
     * freeze is gone within {@link #PATIENCE}.
     */
    protected Duration outageTtl() {
        return Duration.ofSeconds(10);
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

    @AfterEach
    void closeClients() {
        for (LockClient c : clients) {
            c.close();
        }
        clients.clear();
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
