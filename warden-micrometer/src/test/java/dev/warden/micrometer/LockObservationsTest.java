package dev.warden.micrometer;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.testkit.RedisServerExtension;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Acquisitions as observations, against a real Redis backend. */
class LockObservationsTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    LockClient client(String namespace) {
        return LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.namespace", namespace, "warden.lock.connect-timeout", "20s"));
    }

    @Test
    @DisplayName("an acquisition is observed with outcome=acquired and the lock's name and token as high-cardinality keys")
    void acquired() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        try (LockClient locks = client("obs-" + UUID.randomUUID())) {
            Lease lease = new LockObservations(registry).acquire(locks.lock("merchant:7"));
            lease.release();
            TestObservationRegistryAssert.assertThat(registry)
                    .hasObservationWithNameEqualTo(LockObservations.ACQUISITION).that()
                    .hasLowCardinalityKeyValue("outcome", "acquired")
                    .hasHighCardinalityKeyValue("lock.name", "merchant:7")
                    .hasHighCardinalityKeyValue("lock.fencing-token", Long.toString(lease.fencingToken()))
                    .hasBeenStopped();
        }
    }

    @Test
    @DisplayName("a wait that runs out is observed with outcome=timeout")
    void timeout() {
        TestObservationRegistry registry = TestObservationRegistry.create();
        String namespace = "obs-" + UUID.randomUUID();
        try (LockClient holder = client(namespace); LockClient waiter = client(namespace)) {
            Lease held = holder.lock("merchant:8").acquire();
            Optional<Lease> none = new LockObservations(registry).tryAcquire(waiter.lock("merchant:8"), Duration.ofMillis(100));
            assertThat(none).isEmpty();
            held.release();
            TestObservationRegistryAssert.assertThat(registry)
                    .hasObservationWithNameEqualTo(LockObservations.ACQUISITION).that()
                    .hasLowCardinalityKeyValue("outcome", "timeout");
        }
    }
}
