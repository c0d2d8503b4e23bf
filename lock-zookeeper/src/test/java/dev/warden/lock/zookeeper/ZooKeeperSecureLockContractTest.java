package dev.warden.lock.zookeeper;

import dev.warden.lock.LostReason;
import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.TlsMaterial;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The core and fault contracts (mutual exclusion, fencing, loss, clean-up, faults behind a proxy; a
 * holder's process killed or frozen is ZooKeeperLockContractTest's)
 * over TLS with a client certificate the server requires ({@code ssl.clientAuth=need}), as a digest
 * user whose every node is creator-only ({@code acl=creator}, the default with a user). One server is
 * launched for this class, with a 10 ms container reaper, so lock parents with creator-only ACLs are
 * reaped and created again under the contract's load. Warden's clients use only the secure port (a
 * proxied client goes through a plain TCP proxy to it: TLS runs end to end, the certificate is for
 * 127.0.0.1); the kit's own reads and removals go through the plain port as testkit's super user.
 */
@DisplayName("ZooKeeper backend over TLS (client certificate required), digest user with creator-only ACLs")
class ZooKeeperSecureLockContractTest extends LockFaultContractTest {

    static final String SUPER_PASSWORD = "testkit-super-5b7e";
    static final String USER = "warden-tenant";
    static final String PASSWORD = "tenant-pw-2c41";

    static final TlsMaterial TLS = generateTls();

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().superUser(SUPER_PASSWORD).containerCheckInterval(Duration.ofMillis(10))
                    .secureClientPort(TLS, true));

    private static ZooKeeperInspector inspector;

    static TlsMaterial generateTls() {
        try {
            return TlsMaterial.generate(Files.createTempDirectory("warden-zk-tls"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(server().connectString());
        inspector = new ZooKeeperInspector(server().connectString(), SUPER_PASSWORD);
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    private static ZooKeeperServer server() {
        return zookeeper.server();
    }

    /** The TLS and digest settings of every client of this class. */
    static Map<String, Object> secure(Map<String, Object> s, TlsMaterial tls) {
        s.put("warden.lock.zookeeper.tls.trust-store", tls.trustStore().toString());
        s.put("warden.lock.zookeeper.tls.trust-store-password", TlsMaterial.STORE_PASSWORD);
        s.put("warden.lock.zookeeper.tls.key-store", tls.clientKeyStore().toString());
        s.put("warden.lock.zookeeper.tls.key-store-password", TlsMaterial.STORE_PASSWORD);
        return s;
    }

    /**
     * ZooKeeper's client gives each connection attempt the session timeout (the TTL) divided by the
     * number of servers, and over TLS an attempt also loads the stores and shakes hands: on a loaded
     * two-core machine that took over a second, so the kit's 1 s TTL left clients failing to connect.
     */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }

    /**
     * ZooKeeper's Netty client ends its event loop with Netty's {@code shutdownGracefully()}, whose quiet
     * period is 2 s: that thread outlives a closed client by about 2 s, which the kit's own 2 s of slack
     * does not cover on a loaded machine.
     */
    @Override
    protected Duration slack() {
        return Duration.ofSeconds(4);
    }

    @Override
    protected Map<String, Object> settings() {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", server().secureEndpoint());
        s.put("warden.lock.zookeeper.username", USER);
        s.put("warden.lock.zookeeper.password", PASSWORD);
        return secure(s, TLS);
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return new InetSocketAddress(server().host(), server().securePort());
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        return "zookeeper://127.0.0.1:" + proxyPort;
    }

    @Override
    protected String unreachableEndpoints() {
        return "zookeeper://127.0.0.1:" + ZooKeeperLockContractTest.freePort();
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return !inspector.queue(namespace, name).isEmpty();
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        inspector.removeAll(namespace, name);
    }

    /** As {@link ZooKeeperLockContractTest#lossReasonsWhenServerPaused()}. */
    @Override
    protected Set<LostReason> lossReasonsWhenServerPaused() {
        return Set.of(LostReason.SESSION_LOST, LostReason.EXPIRED);
    }

    @Override
    protected void pauseServer() {
        server().pause();
    }

    @Override
    protected void resumeServer() {
        if (server().isPaused()) {
            server().resume();
        }
    }
}
