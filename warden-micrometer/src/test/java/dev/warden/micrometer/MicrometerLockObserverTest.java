package dev.warden.micrometer;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.testkit.RedisServerExtension;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** Lock meters from a real Redis backend, with losses caused by real faults on the server. */
class MicrometerLockObserverTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    static final Duration DEADLINE = Duration.ofSeconds(15);

    SimpleMeterRegistry registry;
    String namespace;

    @BeforeEach
    void setUp() {
        registry = new SimpleMeterRegistry();
        namespace = "meters-" + UUID.randomUUID();
    }

    @AfterEach
    void tearDown() {
        registry.close();
    }

    LockClient client(LockNameTag names, String ttl) {
        return LockClient.create(Map.of(
                "warden.lock.backend", "redis",
                "warden.lock.endpoints", redis.server().uri(),
                "warden.lock.namespace", namespace,
                "warden.lock.ttl", ttl,
                "warden.lock.request-timeout", "300ms",
                // Connecting is not what these tests measure: patient enough for a cold JVM on a loaded host.
                "warden.lock.connect-timeout", "20s"), new MicrometerLockObserver(registry, Tags.of("backend", "redis"), names));
    }

    double lost(String reason) {
        Counter c = registry.find(MicrometerLockObserver.LOST).tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    @Nested
    @DisplayName("a lease held and released")
    class HeldAndReleased {

        @Test
        @DisplayName("tags each recipe's leases with its kind: a semaphore's permits, a read-write lock's sides, a leader's term")
        void kinds() throws Exception {
            try (LockClient locks = client(LockNameTag.OMIT, "10s")) {
                Lease permits = locks.semaphore("pool", 3).acquire(2);
                Lease read = locks.readWriteLock("table").readLock().acquire();
                java.util.concurrent.CompletableFuture<Lease> term = new java.util.concurrent.CompletableFuture<>();
                dev.warden.lock.Candidacy candidacy = locks.election("scheduler").join("node-1",
                        new dev.warden.lock.LeadershipListener() {
                            @Override
                            public void elected(Lease lease) {
                                term.complete(lease);
                            }

                            @Override
                            public void stepped(long t, dev.warden.lock.StepDown why, dev.warden.lock.LeaseLost lost) {
                            }
                        });
                term.get(DEADLINE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
                assertThat(active("semaphore")).isEqualTo(1.0);
                assertThat(active("read-write")).isEqualTo(1.0);
                Await.until(DEADLINE, "the leader's term shows", () -> active("election") == 1.0);
                assertThat(active("lock")).isZero();
                permits.release();
                read.release();
                candidacy.close();
                assertThat(active("semaphore") + active("read-write") + active("election")).isZero();
                assertThat(registry.get(MicrometerLockObserver.ACQUIRE).tag("kind", "election").timer().count()).isEqualTo(1);
                assertThat(registry.get(MicrometerLockObserver.RELEASES).tag("kind", "semaphore").tag("outcome", "released")
                        .counter().count()).isEqualTo(1.0);
            }
        }

        private double active(String kind) {
            return registry.get(MicrometerLockObserver.ACTIVE).tag("kind", kind).gauge().value();
        }

        @Test
        @DisplayName("times the wait and the hold, counts the release, and shows the lease as active while held")
        void grantHoldRelease() {
            try (LockClient locks = client(LockNameTag.OMIT, "10s")) {
                Lease lease = locks.lock("merchant:1").acquire();
                assertThat(registry.get(MicrometerLockObserver.ACTIVE).tag("kind", "lock").gauge().value()).isEqualTo(1.0);
                assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);

                Timer acquire = registry.get(MicrometerLockObserver.ACQUIRE).tag("backend", "redis").timer();
                assertThat(acquire.count()).isEqualTo(1);
                assertThat(registry.get(MicrometerLockObserver.HELD).timer().count()).isEqualTo(1);
                assertThat(registry.get(MicrometerLockObserver.RELEASES).tag("outcome", "released").counter().count())
                        .isEqualTo(1.0);
                assertThat(registry.get(MicrometerLockObserver.ACTIVE).tag("kind", "lock").gauge().value()).isZero();
                assertThat(lost("not_owner") + lost("expired") + lost("client_closed")).isZero();
            }
        }

        @Test
        @DisplayName("counts a forced release on the operator's client and a loss with reason forced on the holder's")
        void forcedRelease() {
            try (LockClient locks = client(LockNameTag.OMIT, "300ms")) {
                Lease lease = locks.lock("job:hung").acquire();
                assertThat(locks.admin().forceRelease("job:hung", lease.fencingToken(), "ops", "hung")).isTrue();
                assertThat(registry.get(MicrometerLockObserver.FORCED_RELEASES).counter().count()).isEqualTo(1.0);
                Await.until(DEADLINE, "the holder's loss is counted", () -> lost("forced") == 1.0);
                assertThat(lease.isValid()).isFalse();
            }
        }

        @Test
        @DisplayName("counts renewals and times how late each is confirmed")
        void renewals() {
            try (LockClient locks = client(LockNameTag.OMIT, "300ms")) {
                Lease lease = locks.lock("job:renewed").acquire();
                Await.until(DEADLINE, "three renewals confirmed", () -> {
                    Timer lag = registry.find(MicrometerLockObserver.RENEWAL_LAG).timer();
                    return lag != null && lag.count() >= 3;
                });
                assertThat(registry.get(MicrometerLockObserver.RENEWALS).counter().count()).isGreaterThanOrEqualTo(3);
                assertThat(registry.get(MicrometerLockObserver.RENEWAL_LAG).timer().max(java.util.concurrent.TimeUnit.MILLISECONDS))
                        .as("a renewal on loopback is confirmed well within the TTL").isLessThan(300);
                lease.release();
            }
        }

        @Test
        @DisplayName("lock names are not tags by default, and are with LockNameTag.INCLUDE")
        void lockNameTags() {
            try (LockClient locks = client(LockNameTag.OMIT, "10s")) {
                locks.lock("merchant:2").acquire().release();
            }
            assertThat(registry.get(MicrometerLockObserver.ACQUIRE).timer().getId().getTag("lock")).isNull();

            SimpleMeterRegistry named = new SimpleMeterRegistry();
            try (LockClient locks = LockClient.create(Map.of("warden.lock.backend", "redis",
                    "warden.lock.endpoints", redis.server().uri(), "warden.lock.namespace", namespace,
                    "warden.lock.connect-timeout", "20s"),
                    new MicrometerLockObserver(named, Tags.empty(), LockNameTag.INCLUDE))) {
                locks.lock("merchant:3").acquire().release();
            }
            assertThat(named.get(MicrometerLockObserver.ACQUIRE).tag("lock", "merchant:3").timer().count()).isEqualTo(1);
            assertThat(named.get(MicrometerLockObserver.HELD).tag("lock", "merchant:3").timer().count()).isEqualTo(1);
        }
    }

    @Nested
    @DisplayName("leases lost by real faults, counted by reason")
    class Lost {

        @Test
        @DisplayName("not_owner: the lock key deleted behind the holder's back")
        void notOwner() {
            try (LockClient locks = client(LockNameTag.OMIT, "300ms")) {
                Lease lease = locks.lock("merchant:deleted").acquire();
                assertThat(redis.server().command("DEL", "{" + namespace + ":merchant:deleted}:lock")).isEqualTo(1L);

                Await.until(DEADLINE, "the renewal finds the lock gone", () -> !lease.isValid());
                assertThat(lost("not_owner")).isEqualTo(1.0);
                assertThat(lease.release()).isEqualTo(ReleaseOutcome.LOST);
                assertThat(registry.get(MicrometerLockObserver.RELEASES).tag("outcome", "lost").counter().count())
                        .isEqualTo(1.0);
                assertThat(registry.get(MicrometerLockObserver.HELD).timer().count()).as("the hold ended at the loss")
                        .isEqualTo(1);
                assertThat(registry.get(MicrometerLockObserver.ACTIVE).tag("kind", "lock").gauge().value()).isZero();
            }
        }

        @Test
        @DisplayName("expired: the server paused (SIGSTOP) past the lease's deadline")
        void expired() {
            try (LockClient locks = client(LockNameTag.OMIT, "600ms")) {
                Lease lease = locks.lock("merchant:paused").acquire();
                redis.server().pause();
                try {
                    Await.until(DEADLINE, "the deadline passes without a confirmed renewal", () -> !lease.isValid());
                } finally {
                    redis.server().resume();
                }
                Await.until(DEADLINE, "the loss is counted", () -> lost("expired") == 1.0);
                assertThat(lost("not_owner")).isZero();
            }
        }

        @Test
        @DisplayName("client_closed: the client closed while the lease was held")
        void clientClosed() {
            LockClient locks = client(LockNameTag.OMIT, "10s");
            Optional<Lease> lease = locks.lock("merchant:closed").tryAcquire(Duration.ofSeconds(5));
            assertThat(lease).isPresent();
            locks.close();
            Await.until(DEADLINE, "the loss is counted", () -> lost("client_closed") == 1.0);
            assertThat(lease.get().isValid()).isFalse();
        }
    }
}
