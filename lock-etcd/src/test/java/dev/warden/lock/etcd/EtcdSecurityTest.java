package dev.warden.lock.etcd;

import dev.warden.lock.Lease;
import dev.warden.lock.LeaseLost;
import dev.warden.lock.LockClient;
import dev.warden.lock.LockException;
import dev.warden.lock.LockObserver;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.lock.etcd.internal.Keys;
import dev.warden.testkit.CapturedOutput;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.TlsMaterial;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What goes wrong with etcd's TLS and users, against one etcd launched for this class with mutual
 * TLS, authentication and one-second auth tokens: a wrong password, a server certificate the client
 * does not trust, a plain-text client, a token that expires under a held lock, and two tenants.
 */
@DisplayName("etcd backend: TLS and authentication failures")
class EtcdSecurityTest {

    static final String SECRET = "S3cretPw-etcd-wrong";
    static final Duration CONNECT = Duration.ofSeconds(2);

    private static TlsMaterial tls;
    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        tls = TlsMaterial.generate(EtcdSecureLockContractTest.tempDir());
        server = EtcdServer.builder().tls(tls).auth("root-pw").authTokenTtl(Duration.ofSeconds(1)).start();
        server.addUser("tenant-a", "a-pw", "a/");
        server.addUser("tenant-b", "b-pw", "b/");
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    private static Map<String, Object> settings(String namespace, String user, String password, Object... more) {
        Map<String, Object> s = EtcdSecureLockContractTest.secureSettings(server, tls, user, password);
        s.put("warden.lock.namespace", namespace);
        // Room for a login (bcrypt on the server) and a renewal that logs in again, on a loaded machine.
        s.put("warden.lock.ttl", "6s");
        s.put("warden.lock.connect-timeout", CONNECT);
        s.put("warden.lock.request-timeout", "2s");
        for (int i = 0; i < more.length; i += 2) {
            s.put((String) more[i], more[i + 1]);
        }
        return s;
    }

    /** Creates a client that must fail within the connect and request timeouts; returns the exception, the secret nowhere. */
    private static LockException failure(Map<String, Object> settings) {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        long started = System.nanoTime();
        String output = CapturedOutput.of(() -> {
            try (LockClient c = LockClient.create(settings)) {
                throw new AssertionError("connected: " + c);
            } catch (LockException e) {
                thrown.set(e);
            }
        });
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        // No hang: the connect timeout, then at most the request timeout, with room for a loaded machine's cold TLS start.
        assertThat(took).isLessThan(CONNECT.plusSeconds(2).plusSeconds(10));
        assertThat(thrown.get()).isInstanceOf(LockException.class);
        assertThat(CapturedOutput.chain(thrown.get())).doesNotContain(SECRET);
        assertThat(String.valueOf(thrown.get())).doesNotContain(SECRET);
        assertThat(output).doesNotContain(SECRET);
        return (LockException) thrown.get();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    @DisplayName("a wrong password is ACCESS_DENIED naming the endpoint, never the password, and holds nothing")
    void wrongPassword() {
        LockException e = failure(settings("a", "tenant-a", SECRET));
        assertThat(e.reason()).as(e.getMessage()).isEqualTo(LockException.Reason.ACCESS_DENIED);
        assertThat(e.getMessage()).contains(server.endpoints()).contains("tenant-a");
        assertThat(server.count("a/")).isZero();
    }

    @Test
    @DisplayName("a server certificate the trust does not vouch for fails the handshake at once, naming the endpoint")
    void untrustedServer() {
        // The JVM's default trust (no trust store set), which knows nothing of this class's CA: the
        // same refusal as another CA's store, without generating one.
        Map<String, Object> s = settings("a", "tenant-a", "a-pw");
        s.remove("warden.lock.etcd.tls.trust-store");
        s.remove("warden.lock.etcd.tls.trust-store-password");
        LockException e = failure(s);
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        // Told as a refused handshake (at once, not a connection timing out), with the JDK's reason.
        assertThat(e.getMessage()).contains("TLS handshake with etcd at " + server.endpoints() + " failed")
                .contains("SSLHandshakeException").doesNotContain("\n");
    }

    @Test
    @DisplayName("a client without the certificate the server requires fails the handshake at once, naming the endpoint")
    void noClientCertificate() {
        Map<String, Object> s = settings("a", "tenant-a", "a-pw");
        s.remove("warden.lock.etcd.tls.key-store");
        s.remove("warden.lock.etcd.tls.key-store-password");
        LockException e = failure(s);
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("TLS handshake with etcd at " + server.endpoints() + " failed");
    }

    @Test
    @DisplayName("a client without a user is refused its first lock with ACCESS_DENIED that says which settings to set")
    void noUser() {
        Map<String, Object> s = settings("a", "tenant-a", "a-pw");
        s.remove("warden.lock.etcd.username");
        s.remove("warden.lock.etcd.password");
        try (LockClient client = LockClient.create(s)) {
            assertThatThrownBy(() -> client.lock("anonymous").tryAcquire(Duration.ofSeconds(1)))
                    .isInstanceOfSatisfying(LockException.class, e -> {
                        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
                        assertThat(e.getMessage()).contains(server.endpoints()).contains("warden.lock.etcd.username");
                    });
        }
        assertThat(server.count(Keys.queuePrefix("a", "anonymous"))).isZero();
    }

    @Test
    @DisplayName("a plain-text client of the TLS server fails within its timeouts, naming the endpoint")
    void plainTextClient() {
        Map<String, Object> s = new java.util.HashMap<>(Map.of("warden.lock.backend", "etcd",
                "warden.lock.endpoints", "etcd://127.0.0.1:" + server.port(), "warden.lock.etcd.username", "tenant-a",
                "warden.lock.etcd.password", SECRET, "warden.lock.ttl", "2s", "warden.lock.connect-timeout", CONNECT,
                "warden.lock.request-timeout", "1s", "warden.lock.namespace", "a"));
        LockException e = failure(s);
        assertThat(e.reason()).isEqualTo(LockException.Reason.UNAVAILABLE);
        assertThat(e.getMessage()).contains("etcd://127.0.0.1:" + server.port()).contains("within " + CONNECT.toMillis() + " ms")
                .contains("etcds://");
    }

    @Test
    @DisplayName("an auth token that expires under a held lock is replaced: renewals and the release succeed on the same lease")
    void expiredTokenRenewed() throws InterruptedException {
        // Renewals every 3 s (TTL/3) with 1 s tokens, which etcd drops within 2 s of their last use:
        // every renewal after the first finds the client's token gone.
        CountDownLatch renewed = new CountDownLatch(2);
        AtomicReference<LeaseLost> lost = new AtomicReference<>();
        LockObserver observer = new LockObserver() {
            @Override
            public void renewed(String name, long fencingToken, Duration remaining) {
                renewed.countDown();
            }

            @Override
            public void lost(LeaseLost event) {
                lost.set(event);
            }
        };
        String before = server.authenticate("tenant-a", "a-pw");
        try (LockClient client = LockClient.create(settings("a", "tenant-a", "a-pw", "warden.lock.ttl", "9s"), observer)) {
            Lease lease = client.lock("token").acquire();
            List<String> held = server.keys(Keys.queuePrefix("a", "token"));
            assertThat(held).hasSize(1);
            assertThat(renewed.await(30, TimeUnit.SECONDS)).as("two renewals").isTrue();
            // A token of this server not used since before the renewals is gone by now: so was the client's.
            assertThatThrownBy(() -> server.requestAs(before, "/v3/kv/range", "{\"key\":\"" + b64("a/") + "\"}"))
                    .isInstanceOf(UncheckedIOException.class).hasMessageContaining("invalid auth token");
            assertThat(lease.isValid()).isTrue();
            assertThat(lost.get()).isNull();
            assertThat(server.keys(Keys.queuePrefix("a", "token"))).isEqualTo(held);
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(server.count(Keys.queuePrefix("a", "token"))).isZero();
        }
    }

    @Test
    @DisplayName("a change of users and roles under a held lock costs nothing: the release succeeds")
    void authChangeUnderHeldLock() {
        try (LockClient client = LockClient.create(settings("a", "tenant-a", "a-pw", "warden.lock.ttl", "6s"))) {
            Lease lease = client.lock("auth-change").acquire();
            // With JWT tokens etcd refuses every token issued before this ("revision of auth store is
            // old"); simple tokens, as here, are checked at the current revision. Either way: no loss.
            server.addUser("tenant-c", "c-pw", "c/");
            assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
            assertThat(server.count(Keys.queuePrefix("a", "auth-change"))).isZero();
        }
    }

    @Test
    @DisplayName("tenant B can neither take, read, delete nor revoke tenant A's lock: ACCESS_DENIED, and A still holds it")
    void tenants() {
        // A TTL well above the 1 s tokens: a renewal that authenticates again on a loaded machine stays in time.
        try (LockClient a = LockClient.create(settings("a", "tenant-a", "a-pw", "warden.lock.ttl", "6s"));
             LockClient bInA = LockClient.create(settings("a", "tenant-b", "b-pw", "warden.lock.ttl", "6s"))) {
            Lease held = a.lock("shared").acquire();
            String key = server.keys(Keys.queuePrefix("a", "shared")).get(0);
            String leaseHex = key.substring(key.lastIndexOf('/') + 1);

            assertThatThrownBy(() -> bInA.lock("shared").tryAcquire(Duration.ofMillis(500)))
                    .isInstanceOfSatisfying(LockException.class, e -> {
                        assertThat(e.reason()).isEqualTo(LockException.Reason.ACCESS_DENIED);
                        assertThat(e.getMessage()).contains("tenant-b").contains(server.endpoints());
                    });
            String b = server.authenticate("tenant-b", "b-pw");
            for (String[] call : List.of(
                    new String[] {"/v3/kv/range", "{\"key\":\"" + b64(key) + "\"}"},
                    new String[] {"/v3/kv/deleterange", "{\"key\":\"" + b64(key) + "\"}"},
                    new String[] {"/v3/kv/put", "{\"key\":\"" + b64(key) + "\",\"value\":\"" + b64("b") + "\"}"},
                    new String[] {"/v3/lease/revoke", "{\"ID\":\"" + Long.parseUnsignedLong(leaseHex, 16) + "\"}"})) {
                assertThatThrownBy(() -> server.requestAs(b, call[0], call[1])).as(call[0])
                        .isInstanceOf(UncheckedIOException.class).hasMessageContaining("permission denied");
            }
            assertThat(held.isValid()).isTrue();
            assertThat(server.keys(Keys.queuePrefix("a", "shared"))).containsExactly(key);
            assertThat(held.release()).isEqualTo(ReleaseOutcome.RELEASED);
        }
    }
}
