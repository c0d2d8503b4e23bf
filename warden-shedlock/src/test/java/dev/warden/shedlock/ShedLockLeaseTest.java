package dev.warden.shedlock;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockAdmin;
import dev.warden.lock.LockClient;
import dev.warden.lock.LostReason;
import dev.warden.testkit.RedisServerExtension;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.DefaultLockingTaskExecutor;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockExtender;
import net.javacrumbs.shedlock.core.LockingTaskExecutor;
import net.javacrumbs.shedlock.core.SimpleLock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What Warden adds to ShedLock, seen from a task run through ShedLock's own {@link DefaultLockingTaskExecutor}
 * (what {@code @SchedulerLock} runs on), against a real redis-server: the task's lease, valid while it runs,
 * its fencing token the one the server shows, read-only, bound to the task's thread only.
 */
@DisplayName("ShedLockLease: the running task's Warden lease")
class ShedLockLeaseTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private LockClient client;
    private WardenLockProvider provider;
    private LockingTaskExecutor executor;
    private final String name = "job-" + UUID.randomUUID();

    @BeforeEach
    void open() {
        // Connecting is not what this tests: a loaded host can take seconds for a JVM's first connection.
        client = LockClient.create(Map.of("warden.lock.backend", "redis", "warden.lock.endpoints",
                redis.server().uri(), "warden.lock.namespace", "shedlock-lease-test", "warden.lock.ttl", "1s",
                "warden.lock.connect-timeout", "20s"));
        provider = new WardenLockProvider(client);
        executor = new DefaultLockingTaskExecutor(provider);
    }

    @AfterEach
    void close() {
        client.close();
    }

    private static LockConfiguration config(String name, Duration atMost, Duration atLeast) {
        return new LockConfiguration(ClockProvider.now(), name, atMost, atLeast);
    }

    @Test
    @DisplayName("inside the task: the lease is valid, its token is the holder's on the server; outside: none")
    void taskSeesItsLease() throws Throwable {
        assertThat(ShedLockLease.find()).isEmpty();
        assertThatThrownBy(ShedLockLease::get).isInstanceOf(IllegalStateException.class);
        LockAdmin admin = client.admin();
        AtomicReference<Long> token = new AtomicReference<>();

        LockingTaskExecutor.TaskResult<Optional<Lease>> result = executor.executeWithLock(() -> {
            Lease lease = ShedLockLease.get();
            assertThat(lease.isValid()).isTrue();
            assertThat(lease.name()).isEqualTo(name);
            assertThat(lease.remaining()).isPositive();
            LockAdmin.Holding holder = admin.holder(name).orElseThrow();
            assertThat(lease.fencingToken()).isEqualTo(holder.token()).isPositive();
            token.set(lease.fencingToken());
            // Bound to the task's thread, not to the process.
            assertThat(CompletableFuture.supplyAsync(ShedLockLease::find).join()).isEmpty();
            return ShedLockLease.find();
        }, config(name, Duration.ofMinutes(1), Duration.ZERO));

        assertThat(result.wasExecuted()).isTrue();
        assertThat(result.getResult()).get().extracting(Lease::fencingToken).isEqualTo(token.get());
        assertThat(ShedLockLease.find()).as("after the task").isEmpty();
        assertThat(admin.holder(name)).as("released at once without lockAtLeastFor").isEmpty();
        assertThat(result.getResult().orElseThrow().isValid()).as("the lease after its release").isFalse();
    }

    @Test
    @DisplayName("the task's lease is read-only: ShedLock ends it and moves its limit")
    void leaseIsReadOnly() {
        executor.executeWithLock((Runnable) () -> {
            Lease lease = ShedLockLease.get();
            assertThatThrownBy(lease::release).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(lease::releaseAsync).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(lease::close).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> lease.releaseAfter(Duration.ZERO)).isInstanceOf(UnsupportedOperationException.class);
            assertThatThrownBy(() -> lease.setMaxHoldTime(Duration.ofMinutes(5)))
                    .isInstanceOf(UnsupportedOperationException.class)
                    .hasMessageContaining("LockExtender");
            assertThat(lease.isValid()).as("still held after the refusals").isTrue();
        }, config(name, Duration.ofMinutes(1), Duration.ZERO));
        assertThat(client.admin().holder(name)).isEmpty();
    }

    @Test
    @DisplayName("nested tasks: the innermost task's lease, then the outer one's again")
    void nestedTasks() {
        String inner = name + "-inner";
        executor.executeWithLock((Runnable) () -> {
            long outer = ShedLockLease.get().fencingToken();
            executor.executeWithLock((Runnable) () -> {
                assertThat(ShedLockLease.get().name()).isEqualTo(inner);
                assertThat(ShedLockLease.get().fencingToken())
                        .isEqualTo(client.admin().holder(inner).orElseThrow().token());
            }, config(inner, Duration.ofMinutes(1), Duration.ZERO));
            assertThat(ShedLockLease.get().name()).isEqualTo(name);
            assertThat(ShedLockLease.get().fencingToken()).isEqualTo(outer);
        }, config(name, Duration.ofMinutes(1), Duration.ZERO));
        assertThat(ShedLockLease.find()).isEmpty();
    }

    @Test
    @DisplayName("LockExtender keeps the lease and moves its limit past the original lockAtMostFor")
    void extendedInsideTheTask() {
        executor.executeWithLock((Runnable) () -> {
            Lease lease = ShedLockLease.get();
            LockExtender.extendActiveLock(Duration.ofSeconds(10), Duration.ZERO);
            assertThat(ShedLockLease.get().fencingToken()).isEqualTo(lease.fencingToken());
            sleep(Duration.ofMillis(1300));
            assertThat(lease.isValid()).as("valid past the original lockAtMostFor of 1 s").isTrue();
            assertThat(client.admin().holder(name)).get().extracting(LockAdmin.Holding::token)
                    .isEqualTo(lease.fencingToken());
        }, config(name, Duration.ofSeconds(1), Duration.ZERO));
        assertThat(client.admin().holder(name)).isEmpty();
    }

    @Test
    @DisplayName("past lockAtMostFor the task is told: the lease reads invalid, MAX_HOLD_TIME, and the lock is free")
    void lostAtLockAtMostFor() {
        List<LeaseLost> told = new CopyOnWriteArrayList<>();
        executor.executeWithLock((Runnable) () -> {
            Lease lease = ShedLockLease.get();
            lease.onLost(told::add);
            await(Duration.ofSeconds(5), () -> !lease.isValid() && !told.isEmpty());
            assertThat(told).extracting(LeaseLost::reason).containsExactly(LostReason.MAX_HOLD_TIME);
            await(Duration.ofSeconds(2), () -> client.admin().holder(name).isEmpty());
            assertThat(provider.lock(config(name, Duration.ofMinutes(1), Duration.ZERO)))
                    .as("another run may take it while this one still works")
                    .hasValueSatisfying(SimpleLock::unlock);
        }, config(name, Duration.ofMillis(200), Duration.ZERO));
    }

    @Test
    @DisplayName("lockAtLeastFor keeps the lock held after the task, then ends it as a release, not a loss, even at lockAtMostFor")
    void lockAtLeastForEndsInARelease() {
        List<LeaseLost> told = new CopyOnWriteArrayList<>();
        AtomicReference<Lease> seen = new AtomicReference<>();
        Duration limit = Duration.ofSeconds(1);
        long start = System.nanoTime();
        executor.executeWithLock((Runnable) () -> {
            seen.set(ShedLockLease.get());
            seen.get().onLost(told::add);
        }, config(name, limit, limit));
        assertThat(ShedLockLease.find()).isEmpty();
        assertThat(client.admin().holder(name)).as("held after the task, within lockAtLeastFor").isPresent();
        assertThat(seen.get().isValid()).isTrue();
        assertThat(provider.lock(config(name, Duration.ofMinutes(1), Duration.ZERO))).as("this process too").isEmpty();
        await(Duration.ofSeconds(3), () -> client.admin().holder(name).isEmpty());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(limit.minusMillis(5));
        assertThat(told).as("losses told").isEmpty();
    }

    /**
     * With lockAtLeastFor = lockAtMostFor the release and the maximum hold time's end fall within a millisecond
     * of each other; where a grant takes microseconds (memory) the limit came first in 27 of 40 runs before the
     * provider brought the release forward to the limit's earliest end. The limit is 3 s, not less: a task
     * whose unlock comes after lockAtMostFor is lost by right, and a loaded machine once stalled one of 40 runs
     * past 300 ms between the grant and the unlock. The runs overlap (unlock returns at once), so 3 s costs 3 s.
     */
    @Test
    @DisplayName("lockAtLeastFor = lockAtMostFor: 40 short runs all end in a release, none told lost")
    void lockAtLeastForAtTheLimitNeverReadsLost() {
        List<LeaseLost> told = new CopyOnWriteArrayList<>();
        try (LockClient memory = LockClient.create(Map.of("warden.lock.backend", "memory",
                "warden.lock.endpoints", "memory://shedlock-lease-test", "warden.lock.ttl", "1s"))) {
            LockingTaskExecutor local = new DefaultLockingTaskExecutor(new WardenLockProvider(memory));
            for (int i = 0; i < 40; i++) {
                local.executeWithLock((Runnable) () -> ShedLockLease.get().onLost(told::add),
                        config(name + "-" + i, Duration.ofSeconds(3), Duration.ofSeconds(3)));
            }
            await(Duration.ofSeconds(15), () -> memory.admin().holders().isEmpty());
        }
        assertThat(told).as("losses told").isEmpty();
    }

    @Test
    @DisplayName("of(SimpleLock): a lock taken directly gives its lease on any thread, the extension's the same, none once spent")
    void leaseOfASimpleLock() {
        SimpleLock lock = provider.lock(config(name, Duration.ofMinutes(1), Duration.ZERO)).orElseThrow();
        long token = ShedLockLease.of(lock).orElseThrow().fencingToken();
        assertThat(token).isEqualTo(client.admin().holder(name).orElseThrow().token());
        assertThat(ShedLockLease.get().fencingToken()).as("bound to the thread that took it").isEqualTo(token);
        assertThat(CompletableFuture.supplyAsync(() -> ShedLockLease.of(lock)).join()).get()
                .extracting(Lease::fencingToken).isEqualTo(token);

        SimpleLock extended = lock.extend(Duration.ofMinutes(2), Duration.ZERO).orElseThrow();
        assertThat(ShedLockLease.of(lock)).as("spent by the extension").isEmpty();
        assertThat(ShedLockLease.of(extended)).get().extracting(Lease::fencingToken).isEqualTo(token);
        assertThat(ShedLockLease.get().fencingToken()).isEqualTo(token);

        // Unlocked on another thread: the taking thread's binding ends too.
        CompletableFuture.runAsync(extended::unlock).join();
        assertThat(ShedLockLease.of(extended)).isEmpty();
        assertThat(ShedLockLease.find()).isEmpty();
        assertThat(client.admin().holder(name)).isEmpty();
        assertThat(ShedLockLease.of(() -> { })).as("another provider's lock").isEmpty();
    }

    private static void await(Duration limit, BooleanSupplier condition) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime() - deadline).as("waited %s ms", limit.toMillis()).isNegative();
            sleep(Duration.ofMillis(10));
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
