package dev.warden.lock.zookeeper;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.LostReason;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.tck.FencedRegister;
import dev.warden.lock.tck.LockHistory;
import dev.warden.lock.tck.internal.Await;
import dev.warden.testkit.TcpProxy;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The session is the lease: what a holder sees when its session expires on the server, and when its
 * server is down for less than the session timeout, in both {@code lost-on} modes.
 */
@DisplayName("ZooKeeper sessions as leases")
class ZooKeeperSessionTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    private static ZooKeeperInspector inspector;

    private final String namespace = "session-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(server().connectString());
        inspector = new ZooKeeperInspector(server().connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    @org.junit.jupiter.api.AfterEach
    void closeEverything() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private static ZooKeeperServer server() {
        return zookeeper.server();
    }

    private LockClient client(String endpoint, Duration ttl, String lostOn, LockObserver observer) {
        return client(endpoint, ttl, lostOn, observer, Duration.ofMillis(500));
    }

    private LockClient client(String endpoint, Duration ttl, String lostOn, LockObserver observer, Duration requestTimeout) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", endpoint);
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl);
        s.put("warden.lock.request-timeout", requestTimeout);
        s.put("warden.lock.zookeeper.lost-on", lostOn);
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        s.put("warden.lock.connect-timeout", "20s");
        LockClient c = LockClient.create(s, observer);
        closeAfter.add(c);
        return c;
    }

    @ParameterizedTest(name = "lost-on={0}")
    @ValueSource(strings = {"suspended", "lost"})
    @DisplayName("a session that expires while holding: the lease is lost before the waiter is granted, whose"
            + " token is higher, and the old holder's fenced write is rejected")
    void sessionExpiresWhileHolding(String lostOn) throws Exception {
        Duration ttl = Duration.ofSeconds(2);
        String name = "expiry-" + lostOn;
        LockHistory history = new LockHistory();
        TcpProxy proxy = TcpProxy.start(server().host(), server().port());
        closeAfter.add(proxy);
        LockClient holder = client("zookeeper://127.0.0.1:" + proxy.port(), ttl, lostOn, history.observer("holder"));
        LockClient waiter = client(server().endpoint(), ttl, lostOn, history.observer("waiter"));
        FencedRegister register = new FencedRegister();

        Lease old = holder.lock(name).acquire();
        Stat oldNode = inspector.holder(namespace, name);
        assertThat(old.fencingToken()).as("the token is the node's czxid").isEqualTo(oldNode.getCzxid());
        assertThat(register.write(old.fencingToken(), 1)).isTrue();
        AtomicLong lostAt = new AtomicLong();
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        old.onLost(event -> {
            lostAt.set(System.nanoTime());
            lost.set(event);
        });
        AtomicLong grantedAt = new AtomicLong();
        CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync().toCompletableFuture()
                .whenComplete((lease, error) -> grantedAt.set(System.nanoTime()));
        Await.until(Duration.ofSeconds(5), "the waiter watches the holder's node", () -> watches() == 1);

        proxy.blackhole();
        // The server hears nothing from the holder and expires its session after the timeout,
        // deleting its node; only then can the waiter be granted.
        Lease next = waiting.get(30, TimeUnit.SECONDS);
        assertThat(inspector.holder(namespace, name).getEphemeralOwner())
                .as("the holder's session expired on the server").isNotEqualTo(oldNode.getEphemeralOwner());
        assertThat(lost.get()).as("the old lease was lost").isNotNull();
        assertThat(lostAt.get() - grantedAt.get()).as("lost before the waiter was granted").isNegative();
        assertThat(lost.get().reason()).isEqualTo(lostOn.equals("suspended") ? LostReason.SESSION_LOST : LostReason.EXPIRED);
        assertThat(old.isValid()).isFalse();
        assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        assertThat(register.write(next.fencingToken(), 2)).isTrue();
        assertThat(register.write(old.fencingToken(), 3)).as("the expired holder's fenced write").isFalse();

        // Reconnected, the old client learns its session expired; it works on with a new session and
        // fresh nodes, and never hands the old lease back.
        proxy.restore();
        assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
        Await.until(Duration.ofSeconds(10), "the old holder's client works again, in a new session",
                () -> answers(() -> holder.lock(name).tryAcquire(Duration.ZERO).isEmpty()));
        next.release();
        Lease again = holder.lock(name).tryAcquire(Duration.ofSeconds(10)).orElseThrow();
        assertThat(again.fencingToken()).isGreaterThan(next.fencingToken());
        assertThat(inspector.holder(namespace, name).getEphemeralOwner()).isNotEqualTo(oldNode.getEphemeralOwner());
        again.release();
        assertThat(history.violations()).isEmpty();
    }

    @ParameterizedTest(name = "lost-on={0}")
    @ValueSource(strings = {"suspended", "lost"})
    @DisplayName("a server down for less than the session timeout: SUSPENDED then RECONNECTED; suspended loses"
            + " the lease at once, lost keeps it; never two holders")
    void serverDownForLessThanTheSession(String lostOn) throws Exception {
        Duration ttl = Duration.ofSeconds(12);
        String name = "blip-" + lostOn;
        LockHistory history = new LockHistory();
        // A release or renewal right after the restart may take a while on a loaded machine; what this test
        // loses comes from the session, never from the request timeout.
        LockClient holder = client(server().endpoint(), ttl, lostOn, history.observer("holder"), Duration.ofSeconds(2));
        LockClient other = client(server().endpoint(), ttl, lostOn, history.observer("other"), Duration.ofSeconds(2));
        Lease lease = holder.lock(name).acquire();
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        lease.onLost(lost::set);
        CompletableFuture<Lease> waiting = other.lock(name).acquireAsync().toCompletableFuture();
        Await.until(Duration.ofSeconds(5), "the other client watches the holder's node", () -> watches() == 1);
        List<Long> owners = inspector.owners(namespace, name);
        assertThat(owners).hasSize(2);
        // The server's watch count may include a watch an earlier test's client left; the waiter's own
        // session is what must watch before the kill.
        Await.until(Duration.ofSeconds(5), "the waiter's session watches", () -> server().fourLetterWord("wchc")
                .contains("0x" + Long.toHexString(owners.get(1))));

        server().kill();
        if (lostOn.equals("suspended")) {
            Await.until(Duration.ofSeconds(5), "SUSPENDED ends the lease at once", () -> lost.get() != null);
            assertThat(lost.get().reason()).isEqualTo(LostReason.SESSION_LOST);
        }
        server().restart();
        // Down for less than the session timeout, as the server sees it: both sessions survived. With
        // lost-on=suspended the holder's client releases its lost lease's node as soon as it reconnects, so
        // the waiter's session is the proof; with lost-on=lost the holder's node is too. The waiter's
        // session is proved by a node it owns, which need not be the one queued before the kill: if the kill
        // cut off the reply to the waiter's watch (CI saw it), the waiter abandons that entry once reconnected
        // and queues a new one after a backoff, in the same session.
        Await.until(Duration.ofSeconds(10), "the waiter's session (0x" + Long.toHexString(owners.get(1))
                + ") owns a queued node after the restart", () -> inspector.owners(namespace, name).contains(owners.get(1)));
        List<Long> after = inspector.owners(namespace, name);
        if (lostOn.equals("lost")) {
            assertThat(after).as("the holder's session survived the restart").startsWith(owners.get(0));
        }

        if (lostOn.equals("lost")) {
            // Reconnected within the lease's validity: renewals confirm it again and nothing is lost.
            int renewals = history.count(LockHistory.Kind.RENEW);
            Await.until(ttl, "a renewal after the reconnection", () -> history.count(LockHistory.Kind.RENEW) > renewals + 1);
            assertThat(lost.get()).isNull();
            assertThat(lease.isValid()).isTrue();
            assertThat(waiting).isNotDone();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        } else {
            // The lost lease's node is deleted by its own client (the session still lives): the lease's
            // loss released it, and the waiter gets the lock.
            assertThat(lease.isValid()).isFalse();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.LOST);
        }
        Lease next = waiting.get(ttl.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
        assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
        assertThat(holder.lock(name).tryAcquire(Duration.ZERO)).isEmpty();
        next.release();
        assertThat(history.violations()).isEmpty();
    }

    @org.junit.jupiter.api.Test
    @DisplayName("a lease that expires while its session lives on (a slow link): its own client deletes its"
            + " node after the lease's last moment, and only then is the waiter granted")
    void leaseExpiresWhileTheSessionLivesOn() throws Exception {
        Duration ttl = Duration.ofSeconds(3);
        String name = "slow-link";
        LockHistory history = new LockHistory();
        TcpProxy proxy = TcpProxy.start(server().host(), server().port());
        closeAfter.add(proxy);
        // lost-on=lost, so a suspension (should the slow link cause one) does not end the lease first.
        LockClient holder = client("zookeeper://127.0.0.1:" + proxy.port(), ttl, "lost", history.observer("holder"));
        LockClient waiter = client(server().endpoint(), ttl, "lost", history.observer("waiter"));
        Lease old = holder.lock(name).acquire();
        long session = inspector.holder(namespace, name).getEphemeralOwner();
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        AtomicLong lostAt = new AtomicLong();
        old.onLost(event -> {
            lostAt.set(System.nanoTime());
            lost.set(event);
        });
        AtomicLong grantedAt = new AtomicLong();
        CompletableFuture<Lease> waiting = waiter.lock(name).acquireAsync().toCompletableFuture()
                .whenComplete((lease, error) -> grantedAt.set(System.nanoTime()));
        Await.until(Duration.ofSeconds(5), "the waiter watches the holder's node", () -> watches() == 1);

        // A round trip of 600 ms or more: every renewal misses the 500 ms request timeout, while pings
        // still reach the server well within the session timeout.
        proxy.delay(Duration.ofMillis(300));
        Lease next = waiting.get(30, TimeUnit.SECONDS);
        assertThat(lost.get()).isNotNull();
        assertThat(lost.get().reason()).isEqualTo(LostReason.EXPIRED);
        assertThat(lostAt.get() - grantedAt.get()).as("lost before the waiter was granted").isNegative();
        assertThat(server().fourLetterWord("cons")).as("the holder's session still lives")
                .contains("sid=0x" + Long.toHexString(session));
        assertThat(next.fencingToken()).isGreaterThan(old.fencingToken());
        proxy.restore();
        assertThat(old.release()).isEqualTo(ReleaseOutcome.LOST);
        next.release();
        assertThat(history.violations()).isEmpty();
    }

    @org.junit.jupiter.api.Test
    @DisplayName("a TTL longer than the servers let a session last is refused: a lease would outlive its session")
    void ttlBeyondTheServersMaximum() {
        assertThatThrownBy(() -> client(server().endpoint(), Duration.ofMinutes(3), "suspended", LockObserver.NONE))
                .isInstanceOfSatisfying(LockException.class, e -> {
                    assertThat(e.reason()).isEqualTo(LockException.Reason.CONFIGURATION);
                    assertThat(e.getMessage()).contains("maxSessionTimeout");
                });
    }

    /** Watches set on the server, from {@code wchs}: each waiter watches exactly one node. */
    private static int watches() {
        Matcher m = Pattern.compile("Total watches:(\\d+)").matcher(server().fourLetterWord("wchs"));
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** The condition's value, or false while the client still fails to reach the server. */
    private static boolean answers(BooleanSupplier condition) {
        try {
            return condition.getAsBoolean();
        } catch (LockException e) {
            assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
            return false;
        }
    }
}
