package dev.warden.lock.redis.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.LeaseCachingDriver;
import dev.warden.lock.spi.LockAttempt;
import dev.warden.lock.spi.LockConfig;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The driver against a real redis-server: the scripts, the wake-ups, recovery, and clean shutdown. */
class RedisDriverTest {

    private static final Duration TTL = Duration.ofSeconds(30);
    private static final Duration REQUEST_TIMEOUT = Duration.ofMillis(500);

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final List<RedisDriver> drivers = new ArrayList<>();
    private RedisDriver driver;
    private String name;
    private Keys keys;

    @BeforeEach
    void setUp(TestInfo test) {
        driver = open(redis.server().uri());
        name = test.getTestMethod().orElseThrow().getName() + "/ünï{c}ode";
        keys = Keys.of("test", name);
    }

    @AfterEach
    void tearDown() {
        drivers.forEach(RedisDriver::close);
    }

    @Test
    void grantsATokenAndRefusesASecondOwnerWithTheHoldersPttl() throws Exception {
        RedisGrant grant = grant(driver.attempt(name, "alice"), Duration.ofSeconds(10));

        assertThat(grant.fencingToken()).isPositive();
        assertThat(grant.value()).isEqualTo("alice:" + grant.fencingToken());
        assertThat(server().command("GET", keys.lock())).isEqualTo(grant.value());
        assertThat((Long) server().command("PTTL", keys.lock())).isBetween(1L, 10_000L);
        assertThat(server().command("GET", keys.fence())).isEqualTo(Long.toString(grant.fencingToken()));
        assertThat(server().command("PTTL", keys.fence())).isEqualTo(-1L);

        LockAttempt bob = driver.attempt(name, "bob");
        assertThat(get(bob.poll(TTL))).isEmpty();
        assertThat(server().command("GET", keys.lock())).isEqualTo(grant.value());
        bob.abandon();
    }

    @Test
    void tokensStrictlyIncreaseAcrossGrantsAndClients() throws Exception {
        RedisDriver other = open(redis.server().uri());
        long last = 0;
        for (int i = 0; i < 6; i++) {
            RedisDriver d = i % 2 == 0 ? driver : other;
            RedisGrant grant = grant(d.attempt(name, "owner-" + i), TTL);
            assertThat(grant.fencingToken()).isGreaterThan(last);
            last = grant.fencingToken();
            assertThat(get(d.release(grant))).isTrue();
        }
    }

    @Test
    void aReservedBlockStaysWithinAMillisecondOfTheServerClockAndLaterGrantsContinueAboveIt() throws Exception {
        long previous = 0;
        for (int i = 0; i < 20; i++) {
            RedisGrant grant = grant(driver.attemptReserving(name, "keeper", 1000), TTL);
            @SuppressWarnings("unchecked")
            List<Object> time = (List<Object>) server().command("TIME");
            long nowMicros = Long.parseLong(String.valueOf(time.get(0))) * 1_000_000 + Long.parseLong(String.valueOf(time.get(1)));
            assertThat(grant.fencingToken()).as("above every token reserved before").isGreaterThan(previous);
            assertThat(driver.lastReserved(grant)).isBetween(grant.fencingToken(), grant.fencingToken() + 999)
                    .isLessThanOrEqualTo(nowMicros + 1000);
            assertThat(server().command("GET", keys.fence())).isEqualTo(Long.toString(driver.lastReserved(grant)));
            previous = driver.lastReserved(grant);
            // Grants back to back: blocks are cut short rather than run the fence past the clock.
            assertThat(get(driver.release(grant))).isTrue();
        }
        RedisGrant plain = grant(driver.attempt(name, "other"), TTL);
        assertThat(plain.fencingToken()).isGreaterThan(previous);
        assertThat(driver.lastReserved(plain)).isEqualTo(plain.fencingToken());
    }

    @Test
    void aPollThatFindsTheLockHeldTellsTheContenderWatch() throws Exception {
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        RedisGrant grant = grant(driver.attemptReserving(name, "keeper", 1000), TTL);
        LeaseCachingDriver.ContenderWatch watch = get(driver.watchContenders(name, grant, asked::incrementAndGet));
        RedisDriver other = open(redis.server().uri());
        LockAttempt contender = other.attempt(name, "contender");
        assertThat(get(contender.poll(TTL))).isEmpty();
        Await.until(Duration.ofSeconds(5), "the watch is told of the contender's poll", () -> asked.get() > 0);
        assertThat(asked.get()).as("told once per poll").isEqualTo(1);
        watch.close();
        assertThat(get(contender.poll(TTL))).isEmpty();
        Await.during(Duration.ofMillis(200), "a closed watch is not told", () -> asked.get() == 1);
        get(contender.abandon());
        assertThat(get(driver.release(grant))).isTrue();
    }

    @Test
    void renewByANonOwnerIsRefusedAndDoesNotExtend() throws Exception {
        RedisGrant grant = grant(driver.attempt(name, "alice"), Duration.ofSeconds(10));
        RedisGrant impostor = new RedisGrant(keys, "mallory:" + grant.fencingToken(), grant.fencingToken());

        assertThat(get(driver.renew(impostor, Duration.ofMinutes(5)))).isFalse();
        assertThat((Long) server().command("PTTL", keys.lock())).isLessThanOrEqualTo(10_000L);

        assertThat(get(driver.renew(grant, Duration.ofMinutes(5)))).isTrue();
        assertThat((Long) server().command("PTTL", keys.lock())).isGreaterThan(10_000L);
    }

    @Test
    void releaseByANonOwnerIsRefusedAndLeavesTheKey() throws Exception {
        RedisGrant grant = grant(driver.attempt(name, "alice"), TTL);
        RedisGrant impostor = new RedisGrant(keys, "mallory:" + grant.fencingToken(), grant.fencingToken());

        assertThat(get(driver.release(impostor))).isFalse();
        assertThat(server().command("GET", keys.lock())).isEqualTo(grant.value());

        assertThat(get(driver.release(grant))).isTrue();
        assertThat(server().command("EXISTS", keys.lock())).isEqualTo(0L);
        assertThat(get(driver.release(grant))).isFalse();
        assertThat(server().command("GET", keys.fence())).isEqualTo(Long.toString(grant.fencingToken()));
    }

    @Test
    void aReleaseWakesAWaiterPromptly() throws Exception {
        RedisDriver other = open(redis.server().uri());
        RedisGrant grant = grant(other.attempt(name, "alice"), TTL);
        LockAttempt bob = driver.attempt(name, "bob");
        startWaiting(bob);
        CompletableFuture<Void> changed = bob.changed().toCompletableFuture();
        assertThat(changed).isNotDone();

        long releasedAt = System.nanoTime();
        assertThat(get(other.release(grant))).isTrue();
        changed.get(2, TimeUnit.SECONDS);

        assertThat(Duration.ofNanos(System.nanoTime() - releasedAt)).isLessThan(Duration.ofMillis(500));
        assertThat(get(bob.poll(TTL))).isPresent();
    }

    @Test
    void aReleaseDuringAPollIsNotMissed() throws Exception {
        RedisGrant grant = grant(driver.attempt(name, "alice"), TTL);
        RedisAttempt bob = (RedisAttempt) driver.attempt(name, "bob");
        startWaiting(bob);

        assertThat(get(driver.release(grant))).isTrue();
        Await.until(Duration.ofSeconds(5), "the release message arrives between polls", bob::releaseSeenSincePoll);

        assertThat(bob.changed().toCompletableFuture()).succeedsWithin(Duration.ofMillis(50));
    }

    @Test
    void withoutAReleaseAWaiterBacksOffForTheHoldersTtlCappedAtOneSecond() throws Exception {
        grant(driver.attempt(name, "alice"), Duration.ofMillis(300));
        LockAttempt bob = driver.attempt(name, "bob");
        startWaiting(bob);
        long start = System.nanoTime();
        bob.changed().toCompletableFuture().get(2, TimeUnit.SECONDS);
        assertThat(elapsedMillis(start)).isBetween(150L, 900L);
        assertThat(get(bob.poll(TTL))).as("the holder expired").isPresent();

        String other = name + "-long";
        grant(driver.attempt(other, "carol"), TTL);
        LockAttempt dave = driver.attempt(other, "dave");
        startWaiting(dave);
        start = System.nanoTime();
        dave.changed().toCompletableFuture().get(3, TimeUnit.SECONDS);
        assertThat(elapsedMillis(start)).isBetween(900L, 2_000L);
        dave.abandon();
    }

    @Test
    void subscriptionsAreCountedAndDroppedWhenTheLastAttemptEnds() throws Exception {
        LockAttempt first = driver.attempt(name, "a");
        LockAttempt second = driver.attempt(name, "b");
        RedisGrant grant = grant(first, TTL);
        assertThat(get(second.poll(TTL))).isEmpty();
        assertThat(subscribers()).as("an attempt subscribes only once the lock is found held").isZero();
        startWaiting(second);
        assertThat(subscribers()).isEqualTo(1L);

        get(second.abandon());
        Await.until(Duration.ofSeconds(5), "the last attempt unsubscribes", () -> subscribers() == 0L);
        assertThat(get(driver.release(grant))).isTrue();
    }

    @Test
    void scriptFlushIsRecoveredTransparently() throws Exception {
        server().command("SCRIPT", "FLUSH");
        RedisGrant grant = grant(driver.attempt(name, "alice"), TTL);
        server().command("SCRIPT", "FLUSH");
        assertThat(get(driver.renew(grant, TTL))).isTrue();
        server().command("SCRIPT", "FLUSH");
        assertThat(get(driver.release(grant))).isTrue();
        server().command("SCRIPT", "FLUSH");
        assertThat(grant(driver.attempt(name, "bob"), TTL).fencingToken()).isGreaterThan(grant.fencingToken());
    }

    @Test
    void aStormOfScriptFlushesFailsNoCall() throws Exception {
        long noScriptsBefore = errors("NOSCRIPT");
        java.util.concurrent.atomic.AtomicBoolean storming = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread flusher = new Thread(() -> {
            while (storming.get()) {
                server().command("SCRIPT", "FLUSH");
            }
        });
        flusher.start();
        try {
            for (int i = 0; i < 100; i++) {
                RedisGrant grant = grant(driver.attempt(name, "owner-" + i), TTL);
                assertThat(get(driver.renew(grant, TTL))).isTrue();
                assertThat(get(driver.release(grant))).as("release %d", i).isTrue();
            }
        } finally {
            storming.set(false);
            flusher.join();
        }
        assertThat(errors("NOSCRIPT")).as("the storm made calls miss their scripts").isGreaterThan(noScriptsBefore);
        assertThat(server().command("EXISTS", keys.lock())).isEqualTo(0L);
    }

    @Test
    void aMissingScriptOrARefusalIsUnavailableNeverProtocol() {
        Calls calls = driver.calls();
        for (String reply : List.of("NOSCRIPT No matching script. Please use EVAL.", "TRYAGAIN Multiple keys request during rehashing of slot",
                "CLUSTERDOWN The cluster is down", "READONLY You can't write against a read only replica.", "LOADING Redis is loading")) {
            assertThat(calls.translate("a call", new io.lettuce.core.RedisCommandExecutionException(reply)).reason())
                    .as(reply).isEqualTo(LockException.Reason.UNAVAILABLE);
        }
        assertThat(calls.translate("a call", new io.lettuce.core.RedisNoScriptException("NOSCRIPT No matching script")).reason())
                .isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(calls.translate("a call", new io.lettuce.core.RedisCommandExecutionException("ERR syntax error")).reason())
                .isEqualTo(LockException.Reason.PROTOCOL);
    }

    private long errors(String code) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("errorstat_" + code + ":count=([0-9]+)")
                .matcher(String.valueOf(server().command("INFO", "errorstats")));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    @Test
    void acquireWorksAfterTheServerRestarts() throws Exception {
        grant(driver.attempt(name, "alice"), TTL);
        server().restart();

        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Optional<Grant> granted = Optional.empty();
        Throwable lastError = null;
        while (granted.isEmpty() && System.nanoTime() < deadline) {
            LockAttempt attempt = driver.attempt(name, "bob");
            try {
                granted = get(attempt.poll(TTL));
            } catch (ExecutionException e) {
                lastError = e.getCause();
                assertThat(lastError).isInstanceOf(LockException.class);
                Thread.sleep(50);
            }
            get(attempt.abandon());
        }
        assertThat(granted).as("granted after the restart; last error: %s", lastError).isPresent();
    }

    @Test
    void callsFailWithinTheRequestTimeoutWhileTheServerIsPaused() throws Exception {
        RedisGrant grant = grant(driver.attempt(name, "alice"), TTL);
        server().pause();
        try {
            long start = System.nanoTime();
            assertThat(driver.renew(grant, TTL).toCompletableFuture())
                    .failsWithin(Duration.ofSeconds(2))
                    .withThrowableOfType(ExecutionException.class)
                    .havingCause().isInstanceOfSatisfying(LockException.class,
                            e -> assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE));
            assertThat(elapsedMillis(start)).isLessThan(REQUEST_TIMEOUT.toMillis() + 700);

            LockAttempt bob = driver.attempt(name + "-other", "bob");
            start = System.nanoTime();
            assertThat(bob.poll(TTL).toCompletableFuture()).failsWithin(Duration.ofSeconds(2));
            assertThat(elapsedMillis(start)).isLessThan(REQUEST_TIMEOUT.toMillis() + 700);
            get(bob.abandon());
        } finally {
            server().resume();
        }
    }

    @Test
    void anUnreachableEndpointFailsOpenPromptlyWithoutLeavingThreads() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        Set<String> before = liveThreadNames();
        long start = System.nanoTime();

        assertThatThrownBy(() -> open("redis://127.0.0.1:" + closedPort))
                .isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE))
                .hasMessageContaining("redis://127.0.0.1:" + closedPort)
                .hasCauseInstanceOf(Exception.class);
        assertThat(elapsedMillis(start)).isLessThan(3_000);
        awaitNoNewThreads(before);
    }

    @Test
    void closingTheDriverLeavesNoThreads() throws Exception {
        Set<String> before = liveThreadNames();
        RedisDriver d = open(redis.server().uri());
        RedisGrant grant = grant(d.attempt(name, "alice"), TTL);
        LockAttempt bob = d.attempt(name, "bob");
        startWaiting(bob);
        CompletableFuture<Void> waiting = bob.changed().toCompletableFuture();
        assertThat(get(d.renew(grant, TTL))).isTrue();
        assertThat(liveThreadNames()).as("the driver runs threads of its own").isNotEqualTo(before);

        d.close();

        assertThat(waiting).failsWithin(Duration.ofSeconds(1)).withThrowableOfType(ExecutionException.class)
                .havingCause().isInstanceOfSatisfying(LockException.class,
                        e -> assertThat(e.reason()).isEqualTo(LockException.Reason.CLOSED));
        awaitNoNewThreads(before);
        assertThatThrownBy(() -> d.attempt(name, "carol")).isInstanceOf(LockException.class);
    }

    private RedisDriver open(String endpoint) {
        // Connecting is not what these tests time: a busy CI host (two modules at once) once took over 1 s.
        RedisDriver d = RedisDriver.open(new LockConfig("redis", List.of(endpoint), "test", TTL, Duration.ofSeconds(15),
                REQUEST_TIMEOUT, Map.of()));
        drivers.add(d);
        return d;
    }

    private static RedisServer server() {
        return redis.server();
    }

    private long subscribers() {
        List<?> reply = (List<?>) server().command("PUBSUB", "NUMSUB", keys.channel());
        return (Long) reply.get(1);
    }

    /**
     * Brings an attempt to where lock-api's loop has it while the lock is held: a failed poll, the
     * first changed() (which subscribes and completes once the server confirms), a second failed poll.
     */
    private static void startWaiting(LockAttempt attempt) throws Exception {
        assertThat(get(attempt.poll(TTL))).isEmpty();
        get(attempt.changed());
        assertThat(get(attempt.poll(TTL))).isEmpty();
    }

    private static RedisGrant grant(LockAttempt attempt, Duration ttl) throws Exception {
        Optional<Grant> grant = get(attempt.poll(ttl));
        assertThat(grant).as("granted").isPresent();
        return (RedisGrant) grant.get();
    }

    private static <T> T get(java.util.concurrent.CompletionStage<T> stage)
            throws InterruptedException, ExecutionException, TimeoutException {
        return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
    }

    private static long elapsedMillis(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    private static Set<String> liveThreadNames() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .collect(Collectors.toSet());
    }

    private static void awaitNoNewThreads(Set<String> before) {
        Await.until(Duration.ofSeconds(5), "no thread left behind", () -> {
            Set<String> added = liveThreadNames();
            added.removeAll(before);
            return added.isEmpty();
        });
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
