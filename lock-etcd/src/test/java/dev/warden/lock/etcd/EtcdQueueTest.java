package dev.warden.lock.etcd;

import dev.warden.lock.Lease;
import dev.warden.lock.LockClient;
import dev.warden.lock.etcd.internal.Keys;
import dev.warden.testkit.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.PutOption;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The queue's keys and round trips on a real etcd member: what the contract tests cannot see. */
@DisplayName("etcd backend: queue entries and round trips")
class EtcdQueueTest {

    private static EtcdServer server;
    private static Client etcd;

    private final String namespace = "queue-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
        etcd = Client.builder().endpoints(server.clientUrls().toArray(String[]::new)).build();
    }

    @AfterAll
    static void stop() {
        if (etcd != null) {
            etcd.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @AfterEach
    void closeClients() throws Exception {
        for (int i = closeAfter.size() - 1; i >= 0; i--) {
            closeAfter.get(i).close();
        }
    }

    private LockClient client(Duration ttl) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("warden.lock.backend", "etcd");
        s.put("warden.lock.endpoints", server.endpoints());
        s.put("warden.lock.namespace", namespace);
        s.put("warden.lock.ttl", ttl);
        // A cold JVM's first connection under CI load can take over the 5 s default; connecting is not what this tests.
        s.put("warden.lock.connect-timeout", "20s");
        LockClient c = LockClient.create(s);
        closeAfter.add(c);
        return c;
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    private static KeyValue read(String key) throws Exception {
        List<KeyValue> kvs = etcd.getKVClient().get(bytes(key)).get(5, TimeUnit.SECONDS).getKvs();
        return kvs.isEmpty() ? null : kvs.get(0);
    }

    @Test
    @DisplayName("an uncontended acquire and release cost two transactions: no keep-alive, read or watch of their own")
    void twoTransactionsPerAcquireAndRelease() throws Exception {
        assertThat(server.isManaged()).as("this test counts the server's calls, so it needs an etcd of its own:"
                + " unset WARDEN_ETCD_ENDPOINTS to let testkit start one").isTrue();
        // A TTL long enough that the session's own keep-alive (every TTL/3) does not run meanwhile.
        LockClient c = client(Duration.ofSeconds(60));
        c.lock("warm-up").acquire().release();
        Map<String, Long> before = calls();
        int rounds = 10;
        for (int i = 0; i < rounds; i++) {
            try (Lease lease = c.lock("counted").acquire()) {
                assertThat(lease.isValid()).isTrue();
            }
        }
        Map<String, Long> after = calls();
        Map<String, Long> made = new LinkedHashMap<>();
        after.forEach((method, n) -> {
            long d = n - before.getOrDefault(method, 0L);
            if (d > 0) {
                made.put(method, d);
            }
        });
        assertThat(made).as("calls the server received for %d acquire+release", rounds).isEqualTo(Map.of("Txn", 2L * rounds));
    }

    /** etcd's count of calls started, by method. */
    private static Map<String, Long> calls() throws Exception {
        String metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.clientUrls().get(0) + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Long> calls = new LinkedHashMap<>();
        for (String line : metrics.split("\n")) {
            if (line.startsWith("grpc_server_started_total{")) {
                int at = line.indexOf("grpc_method=\"") + "grpc_method=\"".length();
                String method = line.substring(at, line.indexOf('"', at));
                calls.merge(method, (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)), Long::sum);
            }
        }
        return calls;
    }

    @Test
    @DisplayName("a client's successive acquisitions of a lock reuse one queue key, each with a new, higher token")
    void oneKeyPerSessionAndLock() throws Exception {
        LockClient c = client(Duration.ofSeconds(10));
        String prefix = Keys.queuePrefix(namespace, "reused");
        List<String> keys = new ArrayList<>();
        long token = 0;
        for (int i = 0; i < 3; i++) {
            try (Lease lease = c.lock("reused").acquire()) {
                assertThat(lease.fencingToken()).isGreaterThan(token);
                token = lease.fencingToken();
                List<String> held = server.keys(prefix);
                assertThat(held).hasSize(1);
                assertThat(read(held.get(0)).getCreateRevision()).isEqualTo(token);
                keys.add(held.get(0));
            }
            assertThat(server.count(prefix)).isZero();
        }
        assertThat(keys).containsOnly(keys.get(0));
    }

    @Test
    @DisplayName("an entry of this client left on the server is replaced, never taken over: the next token is higher than its")
    void leftoverEntryIsReplaced() throws Exception {
        LockClient c = client(Duration.ofSeconds(10));
        String prefix = Keys.queuePrefix(namespace, "leftover");
        String key;
        try (Lease first = c.lock("leftover").acquire()) {
            key = server.keys(prefix).get(0);
        }
        // What a lost grant or a late creation leaves behind: the key on the client's own live lease.
        long lease = Long.parseUnsignedLong(key.substring(prefix.length()), 16);
        etcd.getKVClient().put(bytes(key), bytes("left over"), PutOption.builder().withLeaseId(lease).build())
                .get(5, TimeUnit.SECONDS);
        long leftover = read(key).getCreateRevision();

        try (Lease next = c.lock("leftover").tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(next.fencingToken()).isGreaterThan(leftover);
            KeyValue now = read(key);
            assertThat(now.getCreateRevision()).isEqualTo(next.fencingToken());
            assertThat(now.getValue().toString(StandardCharsets.UTF_8)).isNotEqualTo("left over");
        }
        assertThat(server.count(prefix)).isZero();
    }

    @Test
    @DisplayName("a lease revoked behind the client's back: the next acquisition takes a new lease instead of failing")
    void revokedLeaseIsReplacedAtTheNextAcquisition() throws Exception {
        LockClient c = client(Duration.ofSeconds(30));
        String prefix = Keys.queuePrefix(namespace, "revoked");
        String before;
        long token;
        try (Lease first = c.lock("revoked").acquire()) {
            before = server.keys(prefix).get(0);
            token = first.fencingToken();
        }
        long lease = Long.parseUnsignedLong(before.substring(prefix.length()), 16);
        etcd.getLeaseClient().revoke(lease).get(5, TimeUnit.SECONDS);

        // Within the session's keep-alive interval (TTL/3 = 10 s): the acquisition is the first to meet the revoked lease.
        try (Lease next = c.lock("revoked").tryAcquire(Duration.ofSeconds(5)).orElseThrow()) {
            assertThat(next.isValid()).isTrue();
            assertThat(next.fencingToken()).isGreaterThan(token);
            String after = server.keys(prefix).get(0);
            assertThat(after).isNotEqualTo(before);
            assertThat(read(after).getLease()).isNotEqualTo(lease);
        }
    }

    @Test
    @DisplayName("a grant's TTL counts from the session's last confirmed keep-alive, not from the acquisition")
    void grantCountsFromTheSessionsKeepAlive() throws Exception {
        // Long enough that the session's first keep-alive (TTL/3 after its lease grant) comes after
        // the acquire: the grant must count from the lease grant, sent while the client was created.
        Duration ttl = Duration.ofSeconds(30);
        LockClient c = client(ttl);
        long opened = System.nanoTime();
        // Time must pass between the session's start and the acquire, and more of it than the drift
        // allowance (1 % of the TTL + 2 ms), or a TTL counted from the poll would pass too.
        Thread.sleep(500);
        try (Lease lease = c.lock("counted-from-keep-alive").acquire()) {
            long now = System.nanoTime();
            Duration remaining = lease.remaining();
            assertThat(remaining).isLessThanOrEqualTo(ttl.minus(Duration.ofNanos(now - opened)));
            assertThat(remaining).isPositive().isLessThanOrEqualTo(ttl);
            assertThat(lease.isValid()).isTrue();
        }
    }
}
