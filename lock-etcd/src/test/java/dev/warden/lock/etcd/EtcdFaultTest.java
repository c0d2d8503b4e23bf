package dev.warden.lock.etcd;

import dev.warden.lock.DistributedLock;
import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.FencedRegister;
import dev.warden.lock.tck.LockHistory;
import dev.warden.lock.tck.internal.Await;
import dev.warden.lock.tck.internal.HolderProcess;
import dev.warden.testkit.EtcdCluster;
import dev.warden.testkit.EtcdMember;
import dev.warden.testkit.TcpProxy;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** etcd's own failure modes on a real 3-member cluster: members dying and freezing, holders freezing, leases expiring. */
@DisplayName("etcd backend under faults")
class EtcdFaultTest {

    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration SLACK = Duration.ofSeconds(3);

    private static EtcdCluster cluster;

    private final String namespace = "fault-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void startCluster() {
        cluster = EtcdCluster.start(3);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @BeforeEach
    void heal() {
        cluster.heal();
    }

    @AfterEach
    void closeEverything() throws Exception {
        cluster.resumeAll();
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private Map<String, Object> settings() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "etcd");
        s.put("warden.lock.endpoints", cluster.endpoints());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", TTL);
        s.put("warden.lock.request-timeout", Duration.ofMillis(500));
        s.put("warden.lock.connect-timeout", Duration.ofSeconds(2));
        return s;
    }

    private LockClient client(LockObserver observer) {
        LockClient c = LockClient.create(settings(), observer);
        closeAfter.add(c);
        return c;
    }

    /**
     * A client behind one proxy per member (added to {@code proxies}), so it alone can lose its member
     * while the cluster stays whole; warmed up by one grant, so its channel is connected to exactly one.
     */
    private LockClient clientBehindProxies(List<TcpProxy> proxies) {
        cluster.members().forEach(m -> proxies.add(TcpProxy.start(m.host(), m.port())));
        closeAfter.addAll(proxies);
        Map<String, Object> s = settings();
        s.put("warden.lock.endpoints", proxies.stream().map(p -> "etcd://" + p.host() + ":" + p.port()).collect(Collectors.joining(",")));
        LockClient client = LockClient.create(s, LockObserver.NONE);
        closeAfter.add(client);
        client.lock("warm").tryAcquire(Duration.ofSeconds(5)).orElseThrow().close();
        assertThat(proxies.stream().filter(p -> p.connections() > 0).count()).as("the members the client's channel is connected to")
                .isEqualTo(1);
        return client;
    }

    private Client jetcd() {
        Client c = Client.builder().endpoints(cluster.clientUrls().toArray(String[]::new)).build();
        closeAfter.add(c);
        return c;
    }

    @Test
    @DisplayName("a contended run survives the leader's death and a frozen follower: no overlap, no token regression")
    void leaderKilledFollowerPaused() throws Exception {
        String name = "contended";
        LockHistory history = new LockHistory();
        FencedRegister register = new FencedRegister();
        LockClient[] clients = {client(history.observer("c0")), client(history.observer("c1")), client(history.observer("c2"))};
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong grants = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        closeAfter.add(pool::shutdownNow);
        List<Future<?>> work = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            DistributedLock lock = clients[t % clients.length].lock(name);
            work.add(pool.submit(() -> {
                while (!stop.get()) {
                    try {
                        Optional<Lease> got = lock.tryAcquire(Duration.ofSeconds(5));
                        if (got.isPresent()) {
                            try (Lease lease = got.get()) {
                                if (lease.isValid()) {
                                    register.write(lease.fencingToken(), grants.incrementAndGet());
                                }
                            }
                        }
                    } catch (LockException e) {
                        failures.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        Duration phase = Duration.ofSeconds(60);
        Await.until(phase, "grants before the faults", () -> grants.get() >= 30);

        EtcdMember leader = cluster.awaitLeader(Duration.ofSeconds(10));
        leader.kill();
        long atKill = grants.get();
        Await.until(phase, "grants after the leader was killed", () -> grants.get() >= atKill + 30);

        EtcdMember newLeader = cluster.awaitLeader(Duration.ofSeconds(10));
        EtcdMember follower = cluster.others(newLeader).stream().filter(EtcdMember::isRunning).findFirst().orElseThrow();
        leader.restart();
        follower.pause();
        long atPause = grants.get();
        Await.until(phase, "grants while a follower is frozen", () -> grants.get() >= atPause + 30);
        follower.resume();
        long atResume = grants.get();
        Await.until(phase, "grants after the follower thawed", () -> grants.get() >= atResume + 30);

        stop.set(true);
        for (Future<?> f : work) {
            f.get(30, TimeUnit.SECONDS);
        }
        System.out.printf("contended run: %d grants, %d failed acquisitions (UNAVAILABLE during the faults)%n",
                history.grants(), failures.get());
        assertThat(history.violations()).as("overlapping holders or token regressions").isEmpty();
        assertThat(register.rejected()).as("stale fenced writes").isZero();
    }

    @Test
    @DisplayName("a client whose member goes silent (connection open, nothing answered) moves to another member and keeps granting")
    void silentMemberIsLeft() throws Exception {
        List<TcpProxy> proxies = new ArrayList<>();
        LockClient client = clientBehindProxies(proxies);
        DistributedLock lock = client.lock("silent");
        List<TcpProxy> used = proxies.stream().filter(p -> p.connections() > 0).toList();

        // Connections stay open and new ones are accepted, but nothing is answered: a frozen member.
        used.get(0).blackhole();
        AtomicInteger grants = new AtomicInteger();
        AtomicInteger failures = new AtomicInteger();
        long t0 = System.nanoTime();
        Await.until(Duration.ofSeconds(30), "five grants after the client's member went silent", () -> {
            try {
                lock.tryAcquire(Duration.ofSeconds(1)).ifPresent(lease -> {
                    lease.close();
                    grants.incrementAndGet();
                });
            } catch (LockException e) {
                failures.incrementAndGet();
            }
            return grants.get() >= 5;
        });
        System.out.printf("silent member left: five grants %d ms after the blackhole, %d failed acquisitions%n",
                (System.nanoTime() - t0) / 1_000_000, failures.get());
        assertThat(proxies.stream().filter(p -> p != used.get(0)).mapToInt(TcpProxy::connections).sum())
                .as("connections to the other members").isPositive();
    }

    @Test
    @DisplayName("an acquisition whose first create timed out on a silent member keeps the grant of its retry: the clean-up of the first attempt never deletes the entry of the second")
    void cleanUpOfATimedOutCreateSparesTheRetry() throws Exception {
        List<TcpProxy> proxies = new ArrayList<>();
        LockClient client = clientBehindProxies(proxies);
        List<TcpProxy> used = proxies.stream().filter(p -> p.connections() > 0).toList();

        // The first create (and the clean-up of it) time out on the silent member; the clean-up is
        // retried in the background while the acquisition, retried with the same owner, moves on.
        used.get(0).blackhole();
        String name = "retried";
        Lease held = client.lock(name).tryAcquire(Duration.ofSeconds(20)).orElseThrow(
                () -> new AssertionError("not granted after the client's member went silent"));
        LockClient rival = client(LockObserver.NONE);
        // Past several background retries of the first attempt's clean-up (one per request timeout).
        Await.during(Duration.ofSeconds(3), "the retried acquisition keeps its entry and its lease", () -> held.isValid()
                && cluster.count(Keys.queuePrefix(namespace, name)) == 1);
        assertThat(rival.lock(name).tryAcquire(Duration.ofMillis(200))).as("a rival while the lease is held").isEmpty();
        held.release();
    }

    @Test
    @DisplayName("a holder frozen past its TTL (SIGSTOP) is superseded by a higher token, and its fenced write is rejected")
    void frozenHolderIsFencedOff() throws Exception {
        String name = "frozen";
        HolderProcess.Child child = HolderProcess.start(name, settings(), close -> closeAfter.add(close::run));
        Process holder = child.process();
        long frozenToken = child.token();
        FencedRegister register = new FencedRegister();
        assertThat(register.write(frozenToken, 1)).isTrue();
        LockClient other = client(LockObserver.NONE);
        assertThat(other.lock(name).tryAcquire(Duration.ZERO)).isEmpty();

        signal(holder, "STOP");
        closeAfter.add(() -> signal(holder, "CONT"));
        long t0 = System.nanoTime();
        Lease next = other.lock(name).tryAcquire(TTL.multipliedBy(2).plus(SLACK)).orElseThrow(
                () -> new AssertionError("the frozen holder's lock was not freed after its TTL"));
        System.out.printf("frozen holder: next grant %d ms after SIGSTOP (TTL %d s)%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), TTL.toSeconds());
        assertThat(next.fencingToken()).isGreaterThan(frozenToken);
        assertThat(register.write(next.fencingToken(), 2)).isTrue();

        signal(holder, "CONT");
        assertThat(register.write(frozenToken, 3)).as("the frozen holder's fenced write").isFalse();
        assertThat(register.value()).isEqualTo(2);
        Await.during(TTL, "the thawed holder does not take the lock back", () -> next.isValid()
                && cluster.count(Keys.queuePrefix(namespace, name)) == 1);
        next.release();
    }

    @Test
    @DisplayName("a waiter whose lease expires while it is queued is never granted on it: the waiter behind it goes first, and it queues again on a new lease")
    void waiterWithExpiredLeaseIsNeverGranted() throws Exception {
        String name = "queued";
        LockHistory history = new LockHistory();
        LockClient holderClient = client(history.observer("holder"));
        LockClient doomedClient = client(history.observer("doomed"));
        LockClient lastClient = client(history.observer("last"));
        String prefix = Keys.queuePrefix(namespace, name);

        Lease held = holderClient.lock(name).acquire();
        CompletableFuture<Lease> doomed = doomedClient.lock(name).acquireAsync();
        Await.until(SLACK, "the doomed waiter is queued", () -> cluster.count(prefix) == 2);
        CompletableFuture<Lease> last = lastClient.lock(name).acquireAsync();
        Await.until(SLACK, "the last waiter is queued", () -> cluster.count(prefix) == 3);

        // The doomed waiter's lease ends on the server, as when it expires: its queue entry goes with it.
        Client etcd = jetcd();
        List<KeyValue> queue = etcd.getKVClient().get(ByteSequence.from(prefix, StandardCharsets.UTF_8),
                GetOption.builder().isPrefix(true).withSortField(GetOption.SortTarget.CREATE)
                        .withSortOrder(GetOption.SortOrder.ASCEND).build()).get(5, TimeUnit.SECONDS).getKvs();
        assertThat(queue).hasSize(3);
        long doomedLease = queue.get(1).getLease();
        etcd.getLeaseClient().revoke(doomedLease).get(5, TimeUnit.SECONDS);

        held.release();
        Lease next = last.get(TTL.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
        // The doomed client notices its lost lease at its next keep-alive and queues again, behind the last waiter.
        Await.until(TTL.plus(SLACK), "the doomed waiter queues again on a new lease", () -> cluster.count(prefix) == 2);
        assertThat(doomed).as("not granted while the last waiter holds the lock").isNotDone();
        next.release();
        try (Lease again = doomed.get(TTL.plus(SLACK).toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
        }
        assertThat(history.violations()).isEmpty();
        assertThat(history.grants()).as("grants: holder, last waiter, then the doomed one on its new lease").isEqualTo(3);
    }

    private static void signal(Process p, String signal) throws Exception {
        if (!p.isAlive()) {
            return;
        }
        new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
    }
}
