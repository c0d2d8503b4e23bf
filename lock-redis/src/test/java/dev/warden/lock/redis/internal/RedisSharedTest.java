package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.spi.Share;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Shared names (semaphores, read-write locks) on the Redis driver, through the SPI against a real
 * redis-server: weights and limits in arrival order, tokens, compare-and-renew/delete, abandon, wake-ups,
 * expiry of dead entries, apartness from locks and from the holders' listing, a minimal ACL (on a Cluster:
 * RedisClusterDriverTest, which has one for its class).
 */
class RedisSharedTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
    private static final Duration DEADLINE = Duration.ofSeconds(10);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final List<RedisDriver> drivers = new ArrayList<>();
    private RedisDriver driver;
    private String name;
    private SharedKeys keys;

    @BeforeEach
    void setUp(TestInfo test) {
        driver = open(redis.server().uri(), Map.of());
        name = "semaphore:" + test.getTestMethod().orElseThrow().getName() + "/ünï{c}ode";
        keys = SharedKeys.of("test", name);
    }

    @AfterEach
    void tearDown() {
        drivers.forEach(RedisDriver::close);
    }

    @Test
    @DisplayName("3 permits: three weight-1 entries are granted, the fourth waits and is granted after a release")
    void weightsWithinTheLimit() throws Exception {
        Share one = new Share(1, 3);
        RedisDriver other = open(redis.server().uri(), Map.of());
        SharedGrant a = grant(driver.attemptShared(name, "a", one));
        SharedGrant b = grant(other.attemptShared(name, "b", one));
        SharedGrant c = grant(driver.attemptShared(name, "c", one));
        LockAttempt d = other.attemptShared(name, "d", one);
        startWaiting(d);
        assertThat(entries()).hasSize(4);

        CompletableFuture<Void> changed = d.changed().toCompletableFuture();
        assertThat(get(driver.release(b))).isTrue();
        get(changed);
        SharedGrant dGrant = grant(d);
        assertThat(dGrant.fencingToken()).isGreaterThan(c.fencingToken());
        assertThat(entries()).containsOnlyKeys(a.id(), c.id(), dGrant.id());
        assertThat(weights()).isEqualTo("3");
    }

    @Test
    @DisplayName("no barging: a weight-3 entry waiting behind a holder holds back a later weight-1 entry")
    void noBarging() throws Exception {
        SharedGrant a = grant(driver.attemptShared(name, "a", new Share(1, 3)));
        LockAttempt big = driver.attemptShared(name, "big", new Share(3, 3));
        startWaiting(big);
        LockAttempt small = driver.attemptShared(name, "small", new Share(1, 3));
        assertThat(poll(small)).as("1 of 3 permits is held, but the waiting weight-3 entry is ahead").isEmpty();

        assertThat(get(driver.release(a))).isTrue();
        SharedGrant bigGrant = grant(big);
        assertThat(poll(small)).isEmpty();
        assertThat(get(driver.release(bigGrant))).isTrue();
        assertThat(grant(small).fencingToken()).isGreaterThan(bigGrant.fencingToken());
    }

    @Test
    @DisplayName("each entry is judged by its own limit, and a waiting entry's verdict is trusted only while nothing has left")
    void ownLimitsAndStaleVerdicts() throws Exception {
        SharedGrant all = grant(driver.attemptShared(name, "all", new Share(3, 3)));
        LockAttempt x = driver.attemptShared(name, "x", new Share(1, 3));
        LockAttempt y = driver.attemptShared(name, "y", new Share(1, 3));
        assertThat(poll(x)).isEmpty();
        assertThat(poll(y)).as("behind x, which waits").isEmpty();
        LockAttempt wide = driver.attemptShared(name, "wide", new Share(1, 10));
        SharedGrant wideGrant = grant(wide);
        assertThat(wideGrant.fencingToken()).as("3 + 1 + 1 ahead, and its own 1, fit its limit of 10").isPositive();
        LockAttempt last = driver.attemptShared(name, "last", new Share(3, 3));
        assertThat(poll(last)).isEmpty();

        assertThat(get(driver.release(all))).isTrue();
        // x has not polled since: its verdict is stale, and y, polling first, must not trust it.
        SharedGrant yGrant = grant(y);
        SharedGrant xGrant = grant(x);
        assertThat(xGrant.fencingToken()).isLessThan(yGrant.fencingToken());
        assertThat(weights()).isEqualTo("6");
        assertThat(poll(last)).isEmpty();
        get(last.abandon());
    }

    @Test
    @DisplayName("read-write: readers together, a writer alone, a reader after a waiting writer waits; tokens in arrival order")
    void readersAndWriters() throws Exception {
        SharedGrant r1 = grant(driver.attemptShared(name, "r1", Share.READ));
        SharedGrant r2 = grant(driver.attemptShared(name, "r2", Share.READ));
        LockAttempt w = driver.attemptShared(name, "w", Share.WRITE);
        startWaiting(w);
        LockAttempt r3 = driver.attemptShared(name, "r3", Share.READ);
        startWaiting(r3);

        assertThat(get(driver.release(r1))).isTrue();
        assertThat(poll(w)).as("a reader still holds").isEmpty();
        assertThat(get(driver.release(r2))).isTrue();
        SharedGrant writer = grant(w);
        assertThat(poll(r3)).as("the writer holds").isEmpty();
        CompletableFuture<Void> changed = r3.changed().toCompletableFuture();
        assertThat(get(driver.release(writer))).isTrue();
        get(changed);
        SharedGrant reader = grant(r3);

        assertThat(writer.fencingToken()).isGreaterThan(Math.max(r1.fencingToken(), r2.fencingToken()));
        assertThat(reader.fencingToken()).isGreaterThan(writer.fencingToken());
        assertThat(List.of(r1, r2, writer, reader)).allSatisfy(g ->
                assertThat(g.fencingToken()).isLessThan(1L << 53));
    }

    @Test
    @DisplayName("renew and release compare the entry and the token: a stale or forged grant touches nothing")
    void renewAndReleaseCompareOwnerAndToken() throws Exception {
        SharedGrant first = grant(driver.attemptShared(name, "alice", Share.WRITE));
        assertThat(get(driver.release(first))).isTrue();
        SharedGrant second = grant(driver.attemptShared(name, "alice", Share.WRITE));
        String stored = entries().get(second.id());

        assertThat(get(driver.renew(first, TTL))).isFalse();
        assertThat(get(driver.release(first))).isFalse();
        SharedGrant wrongToken = new SharedGrant(keys, second.id(), first.fencingToken());
        assertThat(get(driver.renew(wrongToken, TTL))).isFalse();
        assertThat(get(driver.release(wrongToken))).isFalse();
        SharedGrant wrongOwner = new SharedGrant(keys, "mallory#1", second.fencingToken());
        assertThat(get(driver.renew(wrongOwner, TTL))).isFalse();
        assertThat(get(driver.release(wrongOwner))).isFalse();
        assertThat(entries()).containsExactly(Map.entry(second.id(), stored));

        assertThat(get(driver.renew(second, Duration.ofMinutes(5)))).isTrue();
        assertThat((Long) server().command("PTTL", keys.entries())).isGreaterThan(TTL.toMillis());
        assertThat(get(driver.release(second))).isTrue();
        assertThat(get(driver.renew(second, TTL))).isFalse();
    }

    @Test
    @DisplayName("an abandoned entry leaves nothing behind and wakes the entry behind it, which now fits")
    void abandonLeavesNothingAndWakesTheNext() throws Exception {
        SharedGrant a = grant(driver.attemptShared(name, "a", new Share(1, 2)));
        LockAttempt big = driver.attemptShared(name, "big", new Share(2, 2));
        startWaiting(big);
        SharedAttempt small = (SharedAttempt) driver.attemptShared(name, "small", new Share(1, 2));
        startWaiting(small);
        CompletableFuture<Void> changed = small.changed().toCompletableFuture();

        get(big.abandon());
        get(changed);
        SharedGrant smallGrant = grant(small);
        assertThat(entries()).containsOnlyKeys(a.id(), smallGrant.id());
        assertThat(weights()).isEqualTo("2");

        assertThat(get(driver.release(a))).isTrue();
        assertThat(get(driver.release(smallGrant))).isTrue();
        assertThat(server().command("EXISTS", keys.queue(), keys.entries())).as("nothing left").isEqualTo(0L);
        Await.until(DEADLINE, "the attempts that ended unsubscribe", () -> subscribers() == 0L);
    }

    @Test
    @DisplayName("a release between polls is remembered, so the next changed() completes at once")
    void aReleaseBetweenPollsIsNotMissed() throws Exception {
        SharedGrant a = grant(driver.attemptShared(name, "a", Share.WRITE));
        SharedAttempt b = (SharedAttempt) open(redis.server().uri(), Map.of()).attemptShared(name, "b", Share.WRITE);
        startWaiting(b);

        assertThat(get(driver.release(a))).isTrue();
        Await.until(DEADLINE, "the release message arrives between polls", b::changeSeenSincePoll);
        assertThat(b.changed().toCompletableFuture()).isCompleted();
        grant(b);
    }

    @Test
    @DisplayName("a holder that stops renewing stops counting within its TTL; a waiter refreshes its own entry meanwhile")
    void aDeadHoldersEntryExpires() throws Exception {
        RedisDriver dead = open(redis.server().uri(), Map.of());
        SharedGrant gone = grant(dead.attemptShared(name, "dead", new Share(2, 2)), Duration.ofMillis(1500));
        LockAttempt waiter = driver.attemptShared(name, "waiter", new Share(1, 2));
        // The waiter's own short TTL: only its polls (a fallback well under TTL/3) keep its entry.
        Duration waiterTtl = Duration.ofMillis(600);
        assertThat(get(waiter.poll(waiterTtl))).isEmpty();
        String waiting = entries().entrySet().stream().filter(e -> e.getKey().startsWith("waiter#")).findFirst()
                .orElseThrow().getValue();
        dead.close();

        SharedGrant granted = untilGranted(waiter, waiterTtl);
        assertThat(granted.fencingToken()).isGreaterThan(gone.fencingToken());
        assertThat(waiting).as("the waiter's entry lived on, twice its TTL, by its polls")
                .startsWith(granted.fencingToken() + "|");
        assertThat(entries()).containsOnlyKeys(granted.id());
        assertThat(weights()).as("the expired entry's weight is taken off the sum").isEqualTo("1");
        assertThat(get(driver.renew(granted, TTL))).isTrue();
        assertThat(get(driver.renew(new SharedGrant(keys, gone.id(), gone.fencingToken()), TTL))).isFalse();
    }

    @Test
    @DisplayName("a pending changed() fails CLOSED when the driver closes")
    void closingFailsAPendingWait() throws Exception {
        RedisDriver d = open(redis.server().uri(), Map.of());
        grant(driver.attemptShared(name, "a", Share.WRITE));
        LockAttempt b = d.attemptShared(name, "b", Share.READ);
        startWaiting(b);
        CompletableFuture<Void> changed = b.changed().toCompletableFuture();

        d.close();

        assertThat(changed).failsWithin(DEADLINE).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
    }

    @Test
    @DisplayName("a lock and a shared name of the same name live apart, and the holders' listing shows the lock only")
    void apartFromLocksAndFromTheListing() throws Exception {
        Keys lockKeys = Keys.of("test", name);
        RedisGrant lock = (RedisGrant) get(driver.attempt(name, "locker").poll(TTL)).orElseThrow();
        SharedGrant writer = grant(driver.attemptShared(name, "writer", Share.WRITE));
        LockAttempt otherLocker = driver.attempt(name, "other");
        assertThat(get(otherLocker.poll(TTL))).isEmpty();
        get(otherLocker.abandon());
        assertThat(poll(driver.attemptShared(name, "reader", Share.READ))).isEmpty();

        List<NamedHolder> holders = get(driver.holders(Duration.ofSeconds(5)));
        assertThat(holders).filteredOn(h -> h.name().equals(name)).singleElement()
                .satisfies(h -> assertThat(h.holder().token()).isEqualTo(lock.fencingToken()));
        assertThat(holders).noneMatch(h -> h.name().contains(":shared:"));

        assertThat(get(driver.release(writer))).isTrue();
        assertThat(server().command("GET", lockKeys.lock())).isEqualTo(lock.value());
        assertThat(get(driver.release(lock))).isTrue();
        assertThat(entries()).hasSize(1).allSatisfy((id, v) -> assertThat(id).startsWith("reader#"));
        assertThat(RedisCluster.slot(keys.queue())).isEqualTo(RedisCluster.slot(lockKeys.lock()));
        assertThat(List.of(keys.entries(), keys.fence(), keys.channel())).allSatisfy(k ->
                assertThat(RedisCluster.slot(k)).isEqualTo(RedisCluster.slot(keys.queue())));
    }

    @Test
    @DisplayName("SCRIPT FLUSH costs the shared scripts nothing (NOSCRIPT, then EVAL)")
    void scriptFlushIsRecovered() throws Exception {
        server().command("SCRIPT", "FLUSH");
        SharedGrant a = grant(driver.attemptShared(name, "a", Share.READ));
        server().command("SCRIPT", "FLUSH");
        assertThat(get(driver.renew(a, TTL))).isTrue();
        server().command("SCRIPT", "FLUSH");
        assertThat(get(driver.release(a))).isTrue();
    }

    @Test
    @DisplayName("the lock-only ACL user with the hash and sorted-set commands added runs shared names; without them it is refused")
    void minimalAcl() throws Exception {
        List<String> acl = new ArrayList<>(List.of("ACL", "SETUSER", "shared-user", "reset", "on", ">shared-pw",
                "~{test:*", "&{test:*", "+@connection", "+script|load", "+evalsha", "+eval", "+get", "+set", "+del",
                "+exists", "+pexpire", "+pttl", "+time", "+publish", "+spublish", "+subscribe", "+ssubscribe",
                "+unsubscribe", "+sunsubscribe"));
        server().command(acl.toArray(String[]::new));
        Map<String, String> login = Map.of("username", "shared-user", "password", "shared-pw");
        RedisDriver limited = open(redis.server().uri(), login);
        assertThat(limited.attemptShared(name, "a", Share.READ).poll(TTL).toCompletableFuture())
                .failsWithin(DEADLINE).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOfSatisfying(LockException.class, e -> {
                    // Redis 7.0 words a command refused inside a script without the NOPERM code; both are denials.
                    assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
                    assertThat(e.getMessage()).containsAnyOf("NOPERM", "can't run this command");
                });

        acl.addAll(SHARED_COMMANDS);
        server().command(acl.toArray(String[]::new));
        SharedGrant holder = grant(limited.attemptShared(name, "holder", Share.WRITE));
        LockAttempt waiter = limited.attemptShared(name, "waiter", Share.READ);
        startWaiting(waiter);
        CompletableFuture<Void> changed = waiter.changed().toCompletableFuture();
        assertThat(get(limited.renew(holder, TTL))).isTrue();
        assertThat(get(limited.release(holder))).isTrue();
        get(changed);
        SharedGrant reader = grant(waiter);
        assertThat(get(limited.release(reader))).isTrue();
    }

    /** What a lock-only user needs on top of docs/security.md's list for shared names. */
    static final List<String> SHARED_COMMANDS = List.of("+hget", "+hset", "+hdel", "+zadd", "+zrem", "+zrevrangebyscore");

    private RedisDriver open(String endpoint, Map<String, String> options) {
        RedisDriver d = RedisDriver.open(new LockConfig("redis", List.of(endpoint), "test", TTL, Duration.ofSeconds(10),
                REQUEST_TIMEOUT, options));
        drivers.add(d);
        return d;
    }

    private static RedisServer server() {
        return redis.server();
    }

    /** The name's entries as stored: id to token|weight|limit|expiresAt|granted|removalsSeen (without the totals). */
    private Map<String, String> entries() {
        List<?> flat = (List<?>) server().command("HGETALL", keys.entries());
        Map<String, String> entries = new HashMap<>();
        for (int i = 0; i < flat.size(); i += 2) {
            entries.put((String) flat.get(i), (String) flat.get(i + 1));
        }
        entries.remove("totals");
        return entries;
    }

    /** The sum of the entries' weights the scripts keep (before the count of removals). */
    private String weights() {
        return ((String) server().command("HGET", keys.entries(), "totals")).split("\\|")[0];
    }

    private long subscribers() {
        List<?> reply = (List<?>) server().command("PUBSUB", "NUMSUB", keys.channel());
        return (Long) reply.get(1);
    }

    /** Where lock-api's loop has an attempt that waits: a failed poll, the subscribing changed(), a failed poll. */
    private static void startWaiting(LockAttempt attempt) throws Exception {
        assertThat(poll(attempt)).isEmpty();
        get(attempt.changed());
        assertThat(poll(attempt)).isEmpty();
    }

    /** Polls and waits for changes, as lock-api's loop does, until granted or the deadline. */
    private static SharedGrant untilGranted(LockAttempt attempt, Duration ttl) throws Exception {
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() - deadline < 0) {
            Optional<Grant> grant = get(attempt.poll(ttl));
            if (grant.isPresent()) {
                return (SharedGrant) grant.get();
            }
            get(attempt.changed());
        }
        throw new AssertionError("not granted within " + DEADLINE);
    }

    private static Optional<Grant> poll(LockAttempt attempt) throws Exception {
        return get(attempt.poll(TTL));
    }

    private static SharedGrant grant(LockAttempt attempt) throws Exception {
        return grant(attempt, TTL);
    }

    private static SharedGrant grant(LockAttempt attempt, Duration ttl) throws Exception {
        Optional<Grant> grant = get(attempt.poll(ttl));
        assertThat(grant).as("granted").isPresent();
        return (SharedGrant) grant.get();
    }

    private static <T> T get(CompletionStage<T> stage) throws Exception {
        return stage.toCompletableFuture().get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
    }
}
