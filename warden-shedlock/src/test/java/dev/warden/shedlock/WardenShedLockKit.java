package dev.warden.shedlock;

import dev.warden.lock.LockClient;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * ShedLock's own provider kit, unchanged, over one Warden backend: a fresh client per test, in a namespace of
 * the test class's own, and the kit's lock state read from the server through Warden's operator view
 * ({@code LockClient.admin().holder(name)}), not through the provider.
 */
abstract class WardenShedLockKit extends AbstractExtensibleLockProviderIntegrationTest {

    /**
     * How long {@link #assertUnlocked} waits for a release the lease keeper sends on its own, when a
     * {@code lockAtMostFor} passes: the kit sleeps to a limit, then asserts at once.
     */
    static final Duration KEEPER_RELEASE = Duration.ofSeconds(2);

    private static final String RUN = UUID.randomUUID().toString().substring(0, 8);

    private LockClient client;
    private WardenLockProvider provider;

    /** Backend and endpoints. */
    protected abstract Map<String, Object> settings();

    /** Short enough for the kit's timings (its limits are 2 ms to 10 s). */
    protected Duration ttl() {
        return Duration.ofSeconds(1);
    }

    /** The test class's namespace: every test of the class, and only those, work in it. */
    protected String namespace() {
        return "shedlock-" + getClass().getSimpleName().toLowerCase(Locale.ROOT) + "-" + RUN;
    }

    @BeforeEach
    void openClient() {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.namespace", namespace());
        s.put("warden.lock.ttl", ttl());
        // Connecting is not what the kit tests: a loaded host can take seconds for a JVM's first connection.
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(20));
        client = LockClient.create(s);
        provider = new WardenLockProvider(client);
    }

    @AfterEach
    void closeClient() {
        if (client != null) {
            client.close();
        }
    }

    /** The client under the provider, for a backend test's own checks. */
    protected LockClient client() {
        return client;
    }

    @Override
    protected ExtensibleLockProvider getLockProvider() {
        return provider;
    }

    @Override
    protected void assertLocked(String lockName) {
        assertThat(client.admin().holder(lockName)).as("holder of '%s' on the server", lockName).isPresent();
    }

    @Override
    protected void assertUnlocked(String lockName) {
        long deadline = System.nanoTime() + KEEPER_RELEASE.toNanos();
        while (client.admin().holder(lockName).isPresent() && System.nanoTime() - deadline < 0) {
            pause();
        }
        assertThat(client.admin().holder(lockName))
                .as("holder of '%s' on the server, %s ms after it should have been released", lockName,
                        KEEPER_RELEASE.toMillis())
                .isEmpty();
    }

    private static void pause() {
        try {
            Thread.sleep(10);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
