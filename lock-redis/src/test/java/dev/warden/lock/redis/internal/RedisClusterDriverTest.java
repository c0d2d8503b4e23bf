package dev.warden.lock.redis.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisClusterExtension;
import dev.warden.testkit.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The driver on a real Redis Cluster: one slot per lock, sharded wake-ups, and the scripts through
 * resharding (MOVED, ASK, TRYAGAIN) and a failover to a node whose script cache is empty; shared names on it.
 */
class RedisClusterDriverTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(3);

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension();

    private final List<RedisDriver> drivers = new ArrayList<>();
    private String name;
    private Keys keys;

    @BeforeEach
    void setUp(TestInfo test) {
        name = test.getTestMethod().orElseThrow().getName() + "/ünï{c}ode";
        keys = Keys.of("test", name);
    }

    @AfterEach
    void tearDown() {
        drivers.forEach(RedisDriver::close);
    }

    private static RedisCluster cluster() {
        return redis.cluster();
    }

    @Test
    @DisplayName("a lock's keys and its release channel share one slot, on one primary")
    void oneSlotPerLock() throws Exception {
        RedisDriver driver = open();
        RedisGrant grant = grant(driver.attempt(name, "alice"));
        LockAttempt bob = driver.attempt(name, "bob");
        assertThat(get(bob.poll(TTL))).isEmpty();

        int slot = RedisCluster.slot(keys.lock());
        assertThat(List.of(keys.fence(), keys.waiting(), keys.channel())).allSatisfy(k ->
                assertThat(RedisCluster.slot(k)).isEqualTo(slot));
        RedisServer owner = cluster().primaryOfSlot(slot);
        assertThat(owner.command("GET", keys.lock())).isEqualTo(grant.value());
        assertThat(owner.command("EXISTS", keys.fence(), keys.waiting())).isEqualTo(2L);
        get(bob.abandon());
    }

    @Test
    @DisplayName("a release in one client wakes a waiter in another through the slot's sharded channel")
    void shardedWakeUp() throws Exception {
        RedisDriver holder = open();
        RedisDriver waiter = open();
        RedisGrant grant = grant(holder.attempt(name, "alice"));
        LockAttempt bob = waiter.attempt(name, "bob");
        startWaiting(bob);
        RedisServer owner = cluster().primaryOf(keys.lock());
        assertThat(owner.command("PUBSUB", "SHARDNUMSUB", keys.channel())).isEqualTo(List.of(keys.channel(), 1L));

        CompletableFuture<Void> changed = bob.changed().toCompletableFuture();
        long releasedAt = System.nanoTime();
        assertThat(get(holder.release(grant))).isTrue();
        changed.get(2, TimeUnit.SECONDS);
        // The holder's TTL is 30 s: the fallback would wait a full second.
        assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(Duration.ofMillis(800));
        assertThat(get(bob.poll(TTL))).isPresent();
    }

    @Test
    @DisplayName("after the lock's slot moves to another primary, renew and release follow it (MOVED)")
    void slotMoved() throws Exception {
        RedisDriver driver = open();
        RedisGrant grant = grant(driver.attempt(name, "alice"));
        int slot = RedisCluster.slot(keys.lock());
        RedisServer from = cluster().primaryOfSlot(slot);
        RedisServer to = cluster().primaries().stream().filter(p -> p != from).findFirst().orElseThrow();

        cluster().moveSlot(slot, to);

        assertThat(get(driver.renew(grant, TTL))).isTrue();
        assertThat(to.command("GET", keys.lock())).isEqualTo(grant.value());
        assertThat(get(driver.release(grant))).isTrue();
        assertThat(grant(driver.attempt(name, "bob")).fencingToken()).isGreaterThan(grant.fencingToken());
    }

    @Test
    @DisplayName("while the slot migrates: ASK for keys already moved, TRYAGAIN retried until the migration ends")
    void slotMigrating() throws Exception {
        RedisDriver driver = open();
        RedisGrant first = grant(driver.attempt(name, "alice"));
        assertThat(get(driver.release(first))).isTrue();
        int slot = RedisCluster.slot(keys.lock());
        RedisServer from = cluster().primaryOfSlot(slot);
        RedisServer to = cluster().primaries().stream().filter(p -> p != from).findFirst().orElseThrow();

        dev.warden.testkit.SlotMigration migration = cluster().beginMigration(slot, to);
        CompletableFuture<Optional<Grant>> polled;
        try {
            // Only the fence moves: the source sends the script on (ASK), and the target, which holds only
            // some of its keys, refuses it (TRYAGAIN) until the rest arrive.
            migration.migrate(keys.fence());
            long refusedBefore = tryAgains(from) + tryAgains(to);
            polled = driver.attempt(name, "bob").poll(TTL).toCompletableFuture();
            Await.until(Duration.ofSeconds(2), "the script is refused with TRYAGAIN, and again",
                    () -> tryAgains(from) + tryAgains(to) >= refusedBefore + 2);
            assertThat(polled).isNotDone();
        } finally {
            migration.finish();
        }

        Optional<Grant> granted = polled.get(REQUEST_TIMEOUT.toSeconds() + 2, TimeUnit.SECONDS);
        assertThat(granted).isPresent();
        assertThat(granted.get().fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(to.command("GET", keys.lock())).asString().endsWith(":" + granted.get().fencingToken());
    }

    @Test
    @DisplayName("a failover to a replica whose script cache is empty: NOSCRIPT there is answered with EVAL")
    void noScriptAfterFailover() throws Exception {
        RedisDriver driver = open();
        RedisGrant grant = grant(driver.attempt(name, "alice"));
        RedisServer primary = cluster().primaryOf(keys.lock());
        RedisServer replica = cluster().replicaOf(primary);
        replica.command("SCRIPT", "FLUSH");
        assertThat(replica.command("SCRIPT", "EXISTS", Scripts.digest(Scripts.Script.RENEW))).isEqualTo(List.of(0L));

        cluster().failover(replica);

        assertThat(get(driver.renew(grant, TTL))).isTrue();
        assertThat(get(driver.release(grant))).isTrue();
        assertThat(grant(driver.attempt(name, "bob")).fencingToken()).isGreaterThan(grant.fencingToken());
        assertThat(replica.command("SCRIPT", "EXISTS", Scripts.digest(Scripts.Script.RENEW))).isEqualTo(List.of(1L));
    }

    @Test
    @DisplayName("shared names: one slot per shared name, sharded wake-ups, READ/WRITE in order")
    void sharedNames() throws Exception {
        // Was RedisSharedTest's, which started a Cluster of its own for this one test.
        SharedKeys shared = SharedKeys.of("test", "semaphore:" + name);
        RedisDriver one = open();
        RedisDriver two = open();
        SharedGrant reader = sharedGrant(one.attemptShared("semaphore:" + name, "r", Share.READ));
        LockAttempt writer = two.attemptShared("semaphore:" + name, "w", Share.WRITE);
        startWaiting(writer);
        RedisServer owner = cluster().primaryOf(shared.queue());
        assertThat(owner.command("ZCARD", shared.queue())).isEqualTo(2L);
        assertThat(owner.command("PUBSUB", "SHARDNUMSUB", shared.channel())).isEqualTo(List.of(shared.channel(), 1L));

        CompletableFuture<Void> changed = writer.changed().toCompletableFuture();
        assertThat(get(one.release(reader))).isTrue();
        get(changed);
        SharedGrant w = sharedGrant(writer);
        assertThat(w.fencingToken()).isGreaterThan(reader.fencingToken());
        assertThat(get(two.renew(w, TTL))).isTrue();
        assertThat(get(two.release(w))).isTrue();
        assertThat(owner.command("EXISTS", shared.queue(), shared.entries())).isEqualTo(0L);
    }

    /** How many TRYAGAIN errors the node has answered. */
    private static long tryAgains(RedisServer node) {
        Matcher m = Pattern.compile("errorstat_TRYAGAIN:count=([0-9]+)").matcher(String.valueOf(node.command("INFO", "errorstats")));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private RedisDriver open() {
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        RedisDriver d = RedisDriver.open(new LockConfig("redis", List.of(cluster().uri()), "test", TTL, Duration.ofSeconds(20),
                REQUEST_TIMEOUT, Map.of()));
        drivers.add(d);
        return d;
    }

    private static void startWaiting(LockAttempt attempt) throws Exception {
        assertThat(get(attempt.poll(TTL))).isEmpty();
        get(attempt.changed());
        assertThat(get(attempt.poll(TTL))).isEmpty();
    }

    private static RedisGrant grant(LockAttempt attempt) throws Exception {
        Optional<Grant> grant = get(attempt.poll(TTL));
        assertThat(grant).as("granted").isPresent();
        return (RedisGrant) grant.get();
    }

    private static SharedGrant sharedGrant(LockAttempt attempt) throws Exception {
        Optional<Grant> grant = get(attempt.poll(TTL));
        assertThat(grant).as("granted").isPresent();
        return (SharedGrant) grant.get();
    }

    private static <T> T get(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
}
