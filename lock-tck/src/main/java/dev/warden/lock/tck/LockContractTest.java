package dev.warden.lock.tck;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.tck.internal.HolderProcess;
import dev.warden.testkit.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Lock;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The lock contract every backend passes. A backend's test extends this class and says only how
 * to reach its real server, how to read lock state on the server directly, and how to pause it.
 * Clauses are grouped so a failure reads as a sentence.
 *
 * <p>Each test works in a fresh namespace, so tests never see each other's locks, and every
 * client a test creates is closed after it.
 */
public abstract class LockContractTest {

    // ----- what a backend says ------------------------------------------------------------------

    /** Settings that reach the real server directly: at least backend and endpoints. */
    protected abstract Map<String, Object> settings();

    /** The address a proxy forwards to, to put one client behind it. */
    protected abstract InetSocketAddress serverAddress();

    /** The endpoints setting that reaches the same server through {@code 127.0.0.1:proxyPort}. */
    protected abstract String endpointsThrough(int proxyPort);

    /** Endpoints where nothing answers. */
    protected abstract String unreachableEndpoints();

    /** Whether the server holds, or has queued, anything for this lock (read directly, not through Warden). */
    protected abstract boolean hasServerState(String namespace, String name);

    /** Removes the lock behind its holder's back, as an operator or a bug might. */
    protected abstract void removeBehindHoldersBack(String namespace, String name);

    /** Freezes the server (SIGSTOP). */
    protected abstract void pauseServer();

    /** Thaws the server (SIGCONT). */
    protected abstract void resumeServer();

    /** The short TTL the kit uses; a backend with coarse leases (etcd: whole seconds) raises it. */
    protected Duration ttl() {
        return Duration.ofSeconds(1);
    }

    /**
     * Why a lease may be reported lost when its server freezes. A backend whose session notices the
     * silence before the lease's own deadline (ZooKeeper reports SUSPENDED at two thirds of the
     * session timeout) adds {@link LostReason#SESSION_LOST}; {@link LostReason#EXPIRED} stays
     * possible for it when a starved client thread notices the silence only after the deadline.
     */
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.EXPIRED);
    }

    /** Time for scheduling noise on a loaded machine; added to every bound the kit waits on. */
    protected Duration slack() {
        return Duration.ofSeconds(2);
    }

    // ----- plumbing -----------------------------------------------------------------------------

    private final String namespace = "tck-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new CopyOnWriteArrayList<>();
    private int names;

    @AfterEach
    void closeEverything() throws Exception {
        resumeServer();
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    /** A new independent client (its own connections, as another process would have). */
    protected LockClient client(Object... overrides) {
        return client(settings(), LockObserver.NONE, overrides);
    }

    /** A new independent client whose grants, renewals, releases and losses {@code observer} sees. */
    protected LockClient observedClient(LockObserver observer, Object... overrides) {
        return client(settings(), observer, overrides);
    }

    private LockClient client(Map<String, Object> base, LockObserver observer, Object... overrides) {
        Map<String, Object> s = new LinkedHashMap<>(base);
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl());
        s.put("warden.lock.request-timeout", Duration.ofMillis(500));
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(2));
        for (int i = 0; i < overrides.length; i += 2) {
            s.put("warden.lock." + overrides[i], overrides[i + 1]);
        }
        LockClient c = LockClient.create(s, observer);
        closeAfter.add(c);
        return c;
    }

    /** A client whose traffic alone passes through a proxy the test controls. */
    protected Proxied clientBehindProxy() {
        return clientBehindProxy(LockObserver.NONE);
    }

    /** Like {@link #clientBehindProxy()}, observed. */
    protected Proxied clientBehindProxy(LockObserver observer) {
        InetSocketAddress target = serverAddress();
        TcpProxy proxy = TcpProxy.start(target.getHostString(), target.getPort());
        closeAfter.add(proxy);
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.endpoints", endpointsThrough(proxy.port()));
        return new Proxied(client(s, observer), proxy);
    }

    /** A client and the proxy in front of it. */
    protected record Proxied(LockClient client, TcpProxy proxy) {
    }

    protected String newName() {
        return "lock-" + (++names) + "-é锁";
    }

    protected boolean onServer(String name) {
        return hasServerState(namespace, name);
    }

    private ExecutorService threads(int n) {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        closeAfter.add(pool::shutdownNow);
        return pool;
    }

    private Duration renewInterval() {
        return ttl().dividedBy(3);
    }

    private static AtomicReference<LeaseLost> watch(Lease lease) {
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        lease.onLost(lost::set);
        return lost;
    }

    // ----- 1. mutual exclusion ------------------------------------------------------------------

    @Nested
    @DisplayName("1. mutual exclusion")
    class MutualExclusion {

        @Test
        @DisplayName("16 threads on 2 clients lose no update and make no stale write")
        void noLostUpdatesNoStaleWrites() throws Exception {
            LockHistory history = new LockHistory();
            LockClient[] clients = {observedClient(history.observer("client0")), observedClient(history.observer("client1"))};
            String name = newName();
            int threads = 16;
            int rounds = 25;
            FencedRegister register = new FencedRegister();
            long[] counter = {0};
            ExecutorService pool = threads(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                LockClient c = clients[t % 2];
                work.add(pool.submit(() -> {
                    start.await();
                    DistributedLock lock = c.lock(name);
                    for (int r = 0; r < rounds; r++) {
                        try (Lease lease = lock.acquire()) {
                            long seen = counter[0];
                            Thread.yield();
                            counter[0] = seen + 1;
                            register.write(lease.fencingToken(), seen + 1);
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : work) {
                f.get(2, TimeUnit.MINUTES);
            }
            assertThat(counter[0]).as("non-atomic counter incremented under the lock").isEqualTo(threads * rounds);
            assertThat(register.rejected()).as("stale fenced writes").isZero();
            assertThat(register.value()).isEqualTo(threads * rounds);
            assertThat(history.grants()).isEqualTo(threads * rounds);
            assertThat(history.violations()).isEmpty();
        }

        @Test
        @DisplayName("a waiter in another client is not shut out by one client's busy threads")
        void noStarvationAcrossClients() throws Exception {
            LockClient busy = client();
            LockClient other = client();
            String name = newName();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong busyGrants = new AtomicLong();
            int threads = 8;
            ExecutorService pool = threads(threads);
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                work.add(pool.submit(() -> {
                    DistributedLock lock = busy.lock(name);
                    while (!stop.get()) {
                        try (Lease lease = lock.acquire()) {
                            busyGrants.incrementAndGet();
                            // Held long enough that the busy client always has a thread queued.
                            Thread.sleep(2);
                        }
                    }
                    return null;
                }));
            }
            try {
                Await.until(slack(), "the busy client takes turns", () -> busyGrants.get() > 20);
                // A deadline, not a speed claim: a client that handed the lock only among its own
                // threads would keep this waiter out for ever.
                Optional<Lease> lease = other.lock(name).tryAcquire(slack().multipliedBy(4));
                assertThat(lease).as("the other client's waiter got the lock").isPresent();
                lease.get().release();
            } finally {
                stop.set(true);
            }
            for (Future<?> f : work) {
                f.get(1, TimeUnit.MINUTES);
            }
        }
    }

    // ----- 2. fencing tokens --------------------------------------------------------------------

    @Nested
    @DisplayName("2. fencing tokens")
    class FencingTokens {

        @Test
        @DisplayName("strictly increase across successive grants on different clients")
        void increaseAcrossClients() {
            LockClient a = client();
            LockClient b = client();
            String name = newName();
            long last = Long.MIN_VALUE;
            for (int i = 0; i < 10; i++) {
                try (Lease lease = (i % 2 == 0 ? a : b).lock(name).acquire()) {
                    assertThat(lease.fencingToken()).isGreaterThan(last);
                    last = lease.fencingToken();
                }
            }
        }
    }

    // ----- 3. reentrancy and hand-off -----------------------------------------------------------

    @Nested
    @DisplayName("3. reentrancy")
    class Reentrancy {

        @Test
        @DisplayName("the same thread re-acquires with the same token; holds unwind one by one")
        void holdCountUnwinds() {
            LockClient c = client();
            LockClient other = client();
            String name = newName();
            DistributedLock lock = c.lock(name);
            Lease outer = lock.acquire();
            Lease inner = lock.acquire();
            assertThat(inner.fencingToken()).isEqualTo(outer.fencingToken());
            assertThat(inner.release()).isEqualTo(ReleaseOutcome.STILL_HELD);
            assertThat(outer.isValid()).isTrue();
            assertThat(onServer(name)).isTrue();
            assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(outer.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(onServer(name)).isFalse();
            assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("a lease can be released from another thread")
        void releasedFromAnotherThread() throws Exception {
            LockClient c = client();
            String name = newName();
            Lease lease = c.lock(name).acquire();
            ReleaseOutcome outcome = threads(1).submit(lease::release).get(10, TimeUnit.SECONDS);
            assertThat(outcome).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(onServer(name)).isFalse();
            assertThat(client().lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("the java.util.concurrent Lock adapter is reentrant and refuses unlock by a non-holder")
        void lockAdapter() throws Exception {
            LockClient c = client();
            String name = newName();
            Lock lock = c.lock(name).asLock();
            lock.lock();
            assertThat(lock.tryLock()).isTrue();
            assertThatThrownBy(() -> threads(1).submit(lock::unlock).get(10, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(IllegalMonitorStateException.class);
            lock.unlock();
            assertThat(onServer(name)).isTrue();
            lock.unlock();
            assertThat(onServer(name)).isFalse();
            assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
            assertThat(lock.tryLock(100, TimeUnit.MILLISECONDS)).isTrue();
            c.lock(name).asLock().unlock();
            assertThat(onServer(name)).as("every view of one lock agrees on its holder").isFalse();
            Thread.currentThread().interrupt();
            try {
                assertThat(lock.tryLock()).as("tryLock() ignores the interrupt flag").isTrue();
                assertThat(Thread.currentThread().isInterrupted()).isTrue();
            } finally {
                Thread.interrupted();
            }
            lock.unlock();
        }
    }

    // ----- 4. timeouts, interruption, cancellation ----------------------------------------------

    @Nested
    @DisplayName("4. waiting gives up cleanly")
    class GivingUp {

        @Test
        @DisplayName("a timed acquire returns empty near its deadline")
        void timedAcquireReturnsNearDeadline() {
            String name = newName();
            try (Lease held = client().lock(name).acquire()) {
                Duration wait = Duration.ofMillis(400);
                long t0 = System.nanoTime();
                Optional<Lease> none = client().lock(name).tryAcquire(wait);
                Duration took = Duration.ofNanos(System.nanoTime() - t0);
                assertThat(none).isEmpty();
                assertThat(took).isGreaterThanOrEqualTo(wait).isLessThan(wait.plus(slack()));
                assertThat(client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
                assertThat(held.isValid()).isTrue();
            }
        }

        @Test
        @DisplayName("a timed-out acquire leaves nothing on the server")
        void timedOutLeavesNothing() {
            LockClient waiter = client();
            String name = newName();
            Lease held = client().lock(name).acquire();
            assertThat(waiter.lock(name).tryAcquire(Duration.ofMillis(200))).isEmpty();
            held.release();
            assertThat(onServer(name)).as("state left on the server").isFalse();
            Await.during(renewInterval(), "nothing appears on the server", () -> !onServer(name));
            assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("an interrupted acquire restores the interrupt flag and leaves nothing on the server")
        void interruptedLeavesNothing() throws Exception {
            LockClient waiter = client();
            String name = newName();
            Lease held = client().lock(name).acquire();
            CompletableFuture<Throwable> thrown = new CompletableFuture<>();
            CompletableFuture<Boolean> flag = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    waiter.lock(name).acquire();
                    thrown.complete(null);
                } catch (Throwable e) {
                    flag.complete(Thread.currentThread().isInterrupted());
                    thrown.complete(e);
                }
            });
            t.start();
            Await.until(slack(), "the waiter is blocked", () -> t.getState() == Thread.State.WAITING
                    || t.getState() == Thread.State.TIMED_WAITING);
            t.interrupt();
            assertThat(thrown.get(10, TimeUnit.SECONDS)).isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.INTERRUPTED);
            assertThat(flag.get()).as("interrupt flag restored").isTrue();
            held.release();
            Await.during(renewInterval(), "nothing appears on the server", () -> !onServer(name));
            assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("a cancelled async acquire leaves nothing on the server")
        void cancelledAsyncLeavesNothing() throws Exception {
            LockClient waiter = client();
            String name = newName();
            Lease held = client().lock(name).acquire();
            CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync();
            Await.during(Duration.ofMillis(100), "still waiting", () -> !waiting.isDone());
            assertThat(waiting.cancel(true)).isTrue();
            held.release();
            // cancel() cannot block: a queue entry (etcd, ZooKeeper) is removed right after it.
            Await.until(slack(), "the abandoned attempt leaves the server", () -> !onServer(name));
            Await.during(renewInterval(), "nothing appears on the server", () -> !onServer(name));
            assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("an async acquire cancelled as it is granted releases the grant")
        void cancelRacingGrantReleases() {
            LockClient c = client();
            String name = newName();
            for (int i = 0; i < 20; i++) {
                CompletableFuture<Lease> f = c.lock(name).acquireAsync();
                if (!f.cancel(true)) {
                    // Too late to cancel: the caller holds a lease and must release it.
                    f.join().release();
                }
            }
            Await.until(slack(), "every raced grant is released", () -> !onServer(name));
            assertThat(client().lock(name).tryAcquire(slack())).isPresent();
        }

        @Test
        @DisplayName("an async acquire whose future the caller times out leaves nothing behind")
        void callerTimeoutLeavesNothing() throws Exception {
            LockClient waiter = client();
            String name = newName();
            Lease held = client().lock(name).acquire();
            CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync().orTimeout(200, TimeUnit.MILLISECONDS);
            assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(java.util.concurrent.TimeoutException.class);
            held.release();
            Await.until(slack(), "the abandoned attempt leaves the server", () -> !onServer(name));
            Await.during(renewInterval(), "nothing appears on the server", () -> !onServer(name));
            assertThat(waiter.lock(name).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("async continuations run on Warden's threads and may block, even to release")
        void continuationsMayBlock() throws Exception {
            String name = newName();
            String thread = client().lock(name).acquireAsync().thenApply(lease -> {
                assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
                return Thread.currentThread().getName();
            }).get(10, TimeUnit.SECONDS);
            // An already complete future runs the continuation on the caller; otherwise Warden's
            // callback threads do, never a driver's I/O thread that the release needs.
            assertThat(thread).satisfiesAnyOf(t -> assertThat(t).isEqualTo(Thread.currentThread().getName()),
                    t -> assertThat(t).startsWith("warden-").contains("-callbacks-"));
            assertThat(onServer(name)).isFalse();
            Lease again = client().lock(name).acquire();
            assertThat(again.releaseAsync().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(again.releaseAsync().toCompletableFuture().get(10, TimeUnit.SECONDS))
                    .isEqualTo(ReleaseOutcome.ALREADY_RELEASED);
        }

        @Test
        @DisplayName("an async acquire with a wait fails with TIMEOUT when it runs out")
        void asyncTimeout() {
            String name = newName();
            try (Lease held = client().lock(name).acquire()) {
                CompletableFuture<Lease> waiting = client().lock(name).acquireAsync(Duration.ofMillis(200));
                assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS))
                        .isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(LockException.class)
                        .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.TIMEOUT);
                assertThat(held.isValid()).isTrue();
            }
        }

        @Test
        @DisplayName("an async acquire completes with a lease once the holder releases")
        void asyncCompletesOnRelease() throws Exception {
            String name = newName();
            Lease held = client().lock(name).acquire();
            CompletableFuture<Lease> waiting = client().lock(name).acquireAsync();
            Await.during(Duration.ofMillis(100), "still waiting", () -> !waiting.isDone());
            held.release();
            try (Lease next = waiting.get(10, TimeUnit.SECONDS)) {
                assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
                assertThat(next.isValid()).isTrue();
            }
        }
    }

    // ----- 5. release ---------------------------------------------------------------------------

    @Nested
    @DisplayName("5. release")
    class Release {

        @Test
        @DisplayName("is idempotent")
        void idempotent() {
            String name = newName();
            Lease lease = client().lock(name).acquire();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.ALREADY_RELEASED);
            lease.close();
            assertThat(lease.isValid()).isFalse();
            assertThat(onServer(name)).isFalse();
        }

        @Test
        @DisplayName("of a lease already lost does not remove the new holder's lock, and is reported")
        void afterLossLeavesNewHolder() {
            String name = newName();
            Lease old = client().lock(name).acquire();
            AtomicReference<LeaseLost> lost = watch(old);
            removeBehindHoldersBack(namespace, name);
            Await.until(renewInterval().plus(slack()), "the old lease is marked lost", () -> lost.get() != null);
            Lease next = client().lock(name).acquire();
            assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
            assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
            assertThat(onServer(name)).isTrue();
            assertThat(next.isValid()).isTrue();
            assertThat(client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }

        @Test
        @DisplayName("of a lease lost on the server but not yet noticed compares before it deletes")
        void unnoticedLossComparesOnServer() {
            String name = newName();
            // A long TTL keeps the old holder's next renewal far away: its release reaches the server.
            Lease old = client("ttl", ttl().multipliedBy(10)).lock(name).acquire();
            removeBehindHoldersBack(namespace, name);
            Lease next = client().lock(name).tryAcquire(slack()).orElseThrow();
            assertThat(old.isValid()).as("the loss is not noticed yet").isTrue();
            assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
            assertThat(onServer(name)).isTrue();
            assertThat(client().lock(name).tryAcquire(Duration.ZERO)).isEmpty();
            assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }

        @Test
        @DisplayName("by another client's stale lease never touches the current holder")
        void onlyTheOwnerReleases() {
            String name = newName();
            LockClient a = client();
            Proxied b = clientBehindProxy();
            Lease stale = b.client().lock(name).acquire();
            b.proxy().blackhole();
            Await.until(ttl().plus(slack()), "the cut-off lease turns invalid", () -> !stale.isValid());
            try (Lease current = a.lock(name).tryAcquire(ttl().plus(slack())).orElseThrow()) {
                b.proxy().restore();
                assertThat(stale.release()).isEqualTo(ReleaseOutcome.LOST);
                assertThat(onServer(name)).isTrue();
                assertThat(current.isValid()).isTrue();
            }
        }
    }

    // ----- 6. a dead holder ---------------------------------------------------------------------

    @Nested
    @DisplayName("6. a holder killed without releasing")
    class DeadHolder {

        @Test
        @DisplayName("frees the lock after its TTL, and the next token is higher")
        void freedAfterTtl() throws Exception {
            String name = newName();
            List<String> command = new ArrayList<>(List.of(
                    ProcessHandle.current().info().command().orElse("java"),
                    "-cp", System.getProperty("java.class.path"),
                    HolderProcess.class.getName(), name));
            Map<String, Object> s = new LinkedHashMap<>(settings());
            s.put("warden.lock.namespace", namespace);
            s.put("warden.lock.ttl", ttl());
            s.forEach((k, v) -> command.add(k + "=" + v));
            Process holder = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            closeAfter.add(holder::destroyForcibly);
            long token;
            try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
                CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                String granted = line.get(30, TimeUnit.SECONDS);
                assertThat(granted).startsWith("GRANTED ");
                token = Long.parseLong(granted.substring("GRANTED ".length()).trim());
                LockClient c = client();
                // Held across several renewals before the kill: the child's keeper works.
                Await.during(ttl().multipliedBy(2), "the live holder keeps the lock", () -> onServer(name));
                assertThat(c.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
                holder.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                long t0 = System.nanoTime();
                Lease next = c.lock(name).tryAcquire(ttl().plus(slack())).orElseThrow(
                        () -> new AssertionError("the dead holder's lock was not freed after its TTL"));
                Duration took = Duration.ofNanos(System.nanoTime() - t0);
                assertThat(next.fencingToken()).isGreaterThan(token);
                assertThat(took).isLessThan(ttl().plus(slack()));
                next.release();
            }
        }
    }

    // ----- 7. the watchdog ----------------------------------------------------------------------

    @Nested
    @DisplayName("7. the lease keeper")
    class Keeper {

        @Test
        @DisplayName("keeps a lock held for 3x its TTL while the holder works")
        void keepsLockAlive() {
            String name = newName();
            LockClient other = client();
            try (Lease lease = client().lock(name).acquire()) {
                AtomicReference<LeaseLost> lost = watch(lease);
                Await.during(ttl().multipliedBy(3).plus(renewInterval()), "the lease stays valid and held",
                        () -> lease.isValid() && onServer(name) && lost.get() == null);
                assertThat(lease.remaining()).isPositive().isLessThanOrEqualTo(ttl());
                assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
            }
            assertThat(onServer(name)).isFalse();
        }

        @Test
        @DisplayName("never renews after release: the lock stays gone and the lease is never reported lost")
        void noRenewalAfterRelease() {
            String name = newName();
            LockHistory history = new LockHistory();
            Lease lease = observedClient(history.observer("holder")).lock(name).acquire();
            AtomicReference<LeaseLost> lost = watch(lease);
            Await.until(renewInterval().multipliedBy(2).plus(slack()), "a renewal is confirmed",
                    () -> history.count(LockHistory.Kind.RENEW) >= 2);
            lease.release();
            Await.during(ttl().plus(renewInterval()), "nothing renews the released lock",
                    () -> !onServer(name) && lost.get() == null && !lease.isValid());
            assertThat(history.violations()).as("renewals after release").isEmpty();
        }

        @Test
        @DisplayName("leaves no thread behind once its client is closed")
        void noThreadOutlivesClient() {
            Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
            LockClient c = LockClient.create(withNamespace());
            try (Lease lease = c.lock(newName()).acquire()) {
                Await.during(renewInterval().multipliedBy(2), "renewing", lease::isValid);
            }
            c.close();
            Await.until(slack(), "threads the client started have ended", () -> newThreads(before).isEmpty());
        }

        private Set<String> newThreads(Set<Thread> before) {
            return Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> !before.contains(t) && t.isAlive())
                    .filter(t -> !t.getName().startsWith("ForkJoinPool.commonPool"))
                    .map(Thread::getName)
                    .collect(Collectors.toSet());
        }
    }

    private Map<String, Object> withNamespace() {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl());
        return s;
    }

    // ----- 8. loss detection --------------------------------------------------------------------

    @Nested
    @DisplayName("8. a lost lease turns invalid and tells its listener")
    class LossDetection {

        @Test
        @DisplayName("when the server is paused past the TTL")
        void serverPaused() {
            String name = newName();
            Lease lease = client().lock(name).acquire();
            AtomicReference<LeaseLost> lost = watch(lease);
            pauseServer();
            try {
                Await.until(ttl().plus(renewInterval()), "the listener fires within one renewal interval of the TTL",
                        () -> lost.get() != null);
                assertThat(lease.isValid()).isFalse();
                assertThat(lost.get().reason()).isIn(lossReasonsWhenServerPaused());
                assertThat(lost.get().fencingToken()).isEqualTo(lease.fencingToken());
            } finally {
                resumeServer();
            }
        }

        @Test
        @DisplayName("when the holder is cut off past the TTL; the next holder's token is higher and the old fenced write is rejected")
        void holderCutOff() {
            String name = newName();
            LockHistory history = new LockHistory();
            Proxied cutOff = clientBehindProxy(history.observer("cut-off"));
            LockClient other = observedClient(history.observer("other"));
            FencedRegister register = new FencedRegister();
            Lease old = cutOff.client().lock(name).acquire();
            AtomicReference<LeaseLost> lost = watch(old);
            assertThat(register.write(old.fencingToken(), 1)).isTrue();
            cutOff.proxy().blackhole();
            Await.until(ttl().plus(renewInterval()), "the cut-off holder's listener fires", () -> lost.get() != null);
            assertThat(old.isValid()).isFalse();
            Lease next = other.lock(name).tryAcquire(ttl().plus(slack())).orElseThrow(
                    () -> new AssertionError("no other client was granted the lock after the cut-off holder's TTL"));
            assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
            assertThat(register.write(next.fencingToken(), 2)).isTrue();
            assertThat(register.write(old.fencingToken(), 3)).as("the cut-off holder's fenced write").isFalse();
            assertThat(register.value()).isEqualTo(2);
            next.release();
            assertThat(history.count(LockHistory.Kind.LOST)).isEqualTo(1);
            assertThat(history.violations()).isEmpty();
        }

        @Test
        @DisplayName("when the lock is removed behind the holder's back, within one renewal interval")
        void removedBehindBack() {
            String name = newName();
            Lease lease = client().lock(name).acquire();
            AtomicReference<LeaseLost> lost = watch(lease);
            removeBehindHoldersBack(namespace, name);
            Await.until(renewInterval().plus(Duration.ofMillis(250)), "the listener fires", () -> lost.get() != null);
            assertThat(lease.isValid()).isFalse();
            assertThat(lost.get().reason()).isEqualTo(LostReason.NOT_OWNER);
        }

        @Test
        @DisplayName("a listener added after the loss is told at once")
        void lateListener() throws Exception {
            String name = newName();
            Lease lease = client().lock(name).acquire();
            AtomicReference<LeaseLost> first = watch(lease);
            removeBehindHoldersBack(namespace, name);
            Await.until(renewInterval().plus(slack()), "lost", () -> first.get() != null);
            CompletableFuture<LeaseLost> late = new CompletableFuture<>();
            lease.onLost(late::complete);
            assertThat(late.get(5, TimeUnit.SECONDS).reason()).isEqualTo(first.get().reason());
        }
    }

    // ----- 9. client lifecycle and input validation ---------------------------------------------

    @Nested
    @DisplayName("9. client lifecycle and bad input")
    class Lifecycle {

        @Test
        @DisplayName("closing a client releases what it holds and refuses new work")
        void closeReleases() {
            LockClient c = client();
            List<String> held = List.of(newName(), newName(), newName());
            List<Lease> leases = new ArrayList<>();
            for (String name : held) {
                leases.add(c.lock(name).acquire());
            }
            AtomicReference<LeaseLost> told = watch(leases.get(0));
            assertThat(held).allMatch(LockContractTest.this::onServer);
            c.close();
            assertThat(held).noneMatch(LockContractTest.this::onServer);
            Await.until(slack(), "the holder is told", () -> told.get() != null);
            assertThat(told.get().reason()).isEqualTo(LostReason.CLIENT_CLOSED);
            assertThat(leases).noneMatch(Lease::isValid);
            LockClient other = client();
            for (String name : held) {
                assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isPresent();
            }
            assertThatThrownBy(() -> c.lock(newName())).isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CLOSED);
            c.close();
        }

        @Test
        @DisplayName("closing a client stops its waiting acquisitions")
        void closeStopsWaiters() throws Exception {
            String name = newName();
            LockClient waiter = client();
            try (Lease held = client().lock(name).acquire()) {
                CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync();
                waiter.close();
                assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).cause().isInstanceOf(LockException.class)
                        .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CLOSED);
                assertThat(held.isValid()).isTrue();
            }
            Await.during(renewInterval(), "nothing left on the server", () -> !onServer(name));
        }

        @Test
        @DisplayName("invalid names are rejected with IllegalArgumentException")
        void invalidNames() {
            LockClient c = client();
            for (String bad : new String[] {null, "", "a\u0000b", "tab\there", "x".repeat(257), "\uD800", "é".repeat(129)}) {
                assertThatThrownBy(() -> c.lock(bad)).as("name %s", bad).isInstanceOf(IllegalArgumentException.class);
            }
            try (Lease odd = c.lock("订单:{42}/a b*?[]").acquire()) {
                assertThat(odd.isValid()).isTrue();
            }
            assertThat(c.lock("x".repeat(256)).tryAcquire(Duration.ZERO)).isPresent();
        }

        @Test
        @DisplayName("invalid durations are rejected with IllegalArgumentException")
        void invalidDurations() {
            DistributedLock lock = client().lock(newName());
            assertThatThrownBy(() -> lock.tryAcquire(Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> lock.tryAcquire(null)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> lock.acquireAsync(Duration.ofSeconds(-5))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> client("ttl", "0s")).isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.CONFIGURATION);
        }
    }

    // ----- 10. an unreachable server ------------------------------------------------------------

    @Nested
    @DisplayName("10. an unreachable server")
    class Unreachable {

        @Test
        @DisplayName("gives an exception within a bounded time, never a lease")
        void nothingListening() {
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> {
                Map<String, Object> s = new LinkedHashMap<>(settings());
                s.put("warden.lock.endpoints", unreachableEndpoints());
                try (LockClient c = client(s, LockObserver.NONE, "connect-timeout", "1s")) {
                    c.lock(newName()).tryAcquire(Duration.ofSeconds(1));
                }
            }).isInstanceOf(LockException.class)
                    .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(2).plus(slack()));
        }

        @Test
        @DisplayName("a paused server fails an acquire with UNAVAILABLE, never a lease")
        void pausedServer() {
            LockClient c = client();
            String name = newName();
            pauseServer();
            try {
                assertThatThrownBy(() -> c.lock(name).tryAcquire(Duration.ofSeconds(5)))
                        .isInstanceOf(LockException.class)
                        .extracting(e -> ((LockException) e).reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            } finally {
                resumeServer();
            }
            assertThat(client().lock(name).tryAcquire(ttl().plus(slack()))).isPresent();
        }
    }
}
