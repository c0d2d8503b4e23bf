package dev.warden.lock.zookeeper;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one acquire and release asks of the server, counted by the server itself (its per-connection
 * {@code recved} counter), and the paths that do not take the short cut.
 */
@DisplayName("ZooKeeper requests per acquire and release")
class ZooKeeperRequestsTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    private static ZooKeeperInspector inspector;

    private final String namespace = "requests-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<LockClient> clients = new ArrayList<>();

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(server().connectString());
        inspector = new ZooKeeperInspector(server().connectString());
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    @AfterEach
    void closeClients() {
        clients.forEach(LockClient::close);
    }

    private static ZooKeeperServer server() {
        return zookeeper.server();
    }

    private LockClient client() {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", server().endpoint());
        s.put("warden.lock.namespace", namespace);
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        s.put("warden.lock.connect-timeout", "20s");
        LockClient c = LockClient.create(s);
        clients.add(c);
        return c;
    }

    @Test
    @DisplayName("an uncontended acquire and release is three requests in two round trips: the create, one read of the"
            + " queue and the token floor sent right behind it, and one versioned delete; the token is the node's czxid")
    void threeRequestsTwoRoundTrips() {
        LockClient c = client();
        String name = "three";
        long session;
        // The first acquire creates the lock's parents; count from the second on.
        try (Lease first = c.lock(name).acquire()) {
            Stat node = inspector.holder(namespace, name);
            assertThat(first.fencingToken()).isEqualTo(node.getCzxid());
            session = node.getEphemeralOwner();
        }
        int cycles = 20;
        long before = received(session);
        long lastToken = 0;
        for (int i = 0; i < cycles; i++) {
            Lease lease = c.lock(name).acquire();
            assertThat(lease.fencingToken()).isGreaterThan(lastToken);
            lastToken = lease.fencingToken();
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }
        long requests = received(session) - before;
        // A ping or two may slip in; a queue read after the create's reply would make it four per cycle.
        assertThat(requests).as("requests for %d acquire + release cycles", cycles).isBetween(3L * cycles, 3L * cycles + 2);
        assertThat(inspector.queue(namespace, name)).isEmpty();
    }

    @Test
    @DisplayName("the first acquire of a name, whose parents the create must make first, reads the queue again"
            + " once the create has answered")
    void firstAcquireOfAName() {
        LockClient c = client();
        String name = "fresh-" + UUID.randomUUID();
        Lease lease = c.lock(name).acquire();
        Stat node = inspector.holder(namespace, name);
        assertThat(node).isNotNull();
        assertThat(lease.fencingToken()).isEqualTo(node.getCzxid());
        assertThat(client().lock(name).tryAcquire(Duration.ZERO)).as("another client").isEmpty();
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(inspector.queue(namespace, name)).isEmpty();
    }

    @Test
    @DisplayName("a waiter granted when the node ahead goes holds its own node, with that node's czxid as token")
    void waiterGrantedLater() throws Exception {
        String name = "waiter";
        Lease held = client().lock(name).acquire();
        CompletableFuture<Lease> waiting = client().lock(name).acquireAsync().toCompletableFuture();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (inspector.queue(namespace, name).size() < 2) {
            assertThat(System.nanoTime() - end).as("the waiter queues within 5 s").isNegative();
            Thread.sleep(10);
        }
        assertThat(waiting).isNotDone();
        assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
        Lease next = waiting.get(10, TimeUnit.SECONDS);
        Stat node = inspector.holder(namespace, name);
        assertThat(next.fencingToken()).isEqualTo(node.getCzxid()).isGreaterThan(held.fencingToken());
        assertThat(inspector.queue(namespace, name)).hasSize(1);
        assertThat(next.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(inspector.queue(namespace, name)).isEmpty();
    }

    @Test
    @DisplayName("a held node whose data someone else changed is still released: its czxid is compared, then"
            + " it is deleted with the version it has now")
    void releaseAfterTheDataChanged() {
        String name = "overwritten";
        Lease lease = client().lock(name).acquire();
        inspector.overwriteHolder(namespace, name, new byte[] {1, 2, 3});
        assertThat(inspector.holder(namespace, name).getVersion()).isEqualTo(1);
        assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(inspector.queue(namespace, name)).isEmpty();
    }

    /** Requests the server has received on the session's connection, from {@code cons}. */
    private static long received(long session) {
        String cons = server().fourLetterWord("cons");
        Matcher m = Pattern.compile("recved=(\\d+),sent=\\d+,sid=0x" + Long.toHexString(session) + "[,)]").matcher(cons);
        assertThat(m.find()).as("the session's connection in %s", cons).isTrue();
        return Long.parseLong(m.group(1));
    }
}
