package dev.warden.lock.redis;

import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.RedisServerExtension;
import dev.warden.testkit.TlsMaterial;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The core and fault contracts (mutual exclusion, fencing, loss, outages; a holder's process killed
 * or frozen is RedisLockContractTest's) over mutual TLS and as an ACL user at once: a redis-server with a TLS port that
 * requires client certificates (its default), a CA and certificates generated for this class, the
 * client trusting only that CA and logging in as a user holding exactly docs/security.md's minimal ACL for
 * a lock-only user, its key and channel patterns covering the kit's {@code tck-*} namespaces.
 */
@DisplayName("Redis backend over mutual TLS as a lock-only ACL user")
class RedisTlsLockContractTest extends LockFaultContractTest {

    static final TlsMaterial TLS = TlsMaterial.generate(tempDir());
    static final int TLS_PORT = freePort();

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension(tlsServer(TLS, TLS_PORT));

    static final String USER = "tck-locks";
    static final String PASSWORD = "Tck-acl-pw-0k";

    /** docs/security.md's minimal ACL for a lock-only user, {@code <ns>} being the kit's {@code tck-*} namespaces. */
    @BeforeAll
    static void lockOnlyUser() {
        redis.server().command("ACL", "SETUSER", USER, "reset", "on", ">" + PASSWORD, "~{tck-*", "&{tck-*",
                "+@connection", "+script|load", "+evalsha", "+eval", "+get", "+set", "+del", "+exists", "+pexpire",
                "+pttl", "+time", "+publish", "+spublish", "+subscribe", "+ssubscribe", "+unsubscribe", "+sunsubscribe",
                "+hget", "+hset", "+hdel", "+zadd", "+zrem", "+zrevrangebyscore");
    }

    /** A server with its plain port (for testkit and assertions) and a TLS port that requires a client certificate. */
    static RedisServer.Builder tlsServer(TlsMaterial tls, int tlsPort) {
        return RedisServer.builder().config("tls-port", Integer.toString(tlsPort))
                .config("tls-cert-file", tls.serverCertificate().toString())
                .config("tls-key-file", tls.serverKey().toString())
                .config("tls-ca-cert-file", tls.caCertificate().toString());
    }

    /** Settings for a rediss:// client of that server, with mutual TLS. */
    static Map<String, Object> tlsSettings(TlsMaterial tls, int tlsPort) {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "redis");
        s.put("warden.lock.endpoints", "rediss://127.0.0.1:" + tlsPort);
        s.put("warden.lock.redis.tls.trust-store", tls.trustStore().toString());
        s.put("warden.lock.redis.tls.trust-store-password", TlsMaterial.STORE_PASSWORD);
        s.put("warden.lock.redis.tls.key-store", tls.clientKeyStore().toString());
        s.put("warden.lock.redis.tls.key-store-password", TlsMaterial.STORE_PASSWORD);
        return s;
    }

    static Path tempDir() {
        try {
            Path dir = Files.createTempDirectory("warden-tls");
            dir.toFile().deleteOnExit();
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The minimal lock-only ACL has no +scan: listing is an operator's right (docs/security.md). */
    @Override
    protected boolean canListHolders() {
        return false;
    }

    @Override
    protected Map<String, Object> settings() {
        Map<String, Object> s = tlsSettings(TLS, TLS_PORT);
        s.put("warden.lock.redis.username", USER);
        s.put("warden.lock.redis.password", PASSWORD);
        return s;
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return Long.valueOf(1).equals(redis.server().command("EXISTS", "{" + namespace + ":" + name + "}:lock"));
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress("127.0.0.1", TLS_PORT);
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "rediss://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return "rediss://127.0.0.1:" + freePort();
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        redis.server().command("DEL", "{" + namespace + ":" + name + "}:lock");
    }

    @Override
    protected void pauseServer() {
        redis.server().pause();
    }

    @Override
    protected void resumeServer() {
        if (redis.server().isPaused()) {
            redis.server().resume();
        }
    }
}
