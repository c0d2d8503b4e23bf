package dev.warden.lock.etcd;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.lock.tck.LockLeaseCacheContractTest;
import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

/**
 * The core and fault contracts with lease caching on: every released lock is kept for the next acquisition
 * (for 300 ms, longer than most clauses wait between a release and the next acquisition), against one real
 * etcd member launched for this class.
 */
@DisplayName("etcd backend, leases kept (warden.lock.lease-cache)")
class EtcdLeaseCacheContractTest extends LockLeaseCacheContractTest {

    /** Longer than most clauses take between a release and the next acquisition, short enough not to slow them. */
    private static final Duration KEPT_FOR = Duration.ofMillis(300);

    private static EtcdServer server;

    @BeforeAll
    static void startServer() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @BeforeEach
    void heal() {
        server.heal();
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    /**
     * A kept hold reserves its block of tokens by raising the namespace's token floor at its first release,
     * and a holder read adds the floor as it is now to the entry's revision: a lock held across another lock's
     * reservation shows a token above its own, never below (as in the migrating step, see the kit).
     */
    @Override
    protected boolean observedTermExact() {
        return false;
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", server.endpoints(),
                "warden.lock.lease-cache", KEPT_FOR);
    }

    @Override
    protected Duration keptFor() {
        return KEPT_FOR;
    }

    /** Its grants reserve no tokens: the client reserves each kept grant's block at its first release. */
    @Override
    protected boolean keptReleaseAsksServer() {
        return true;
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server.host(), server.port());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "etcd://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "etcd://127.0.0.1:" + s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return server.count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        server.deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    protected void pauseServer() {
        server.pause();
    }

    @Override
    protected void resumeServer() {
        if (server.isPaused()) {
            server.resume();
        }
    }
}
