package dev.warden.lock.zookeeper;

import dev.warden.lock.tck.LockContractTest;
import dev.warden.testkit.ZooKeeperServer;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The core contract as a digest user whose every node is creator-only ({@code acl=creator}, the default
 * with a user), on one server launched for this class with a 10 ms container reaper, so lock parents
 * with creator-only ACLs are reaped and created again under the contract's load. The kit's own reads go
 * through testkit's super user. (TLS is not part of it yet: ZooKeeper's Netty transport needs
 * io.netty:netty-transport-classes-epoll, which this build cannot resolve; see the README.)
 */
@DisplayName("ZooKeeper backend, digest user with creator-only ACLs")
class ZooKeeperSecureLockContractTest extends LockContractTest {

    static final String SUPER_PASSWORD = "testkit-super-5b7e";
    static final String USER = "warden-tenant";
    static final String PASSWORD = "tenant-pw-2c41";

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension(
            ZooKeeperServer.builder().superUser(SUPER_PASSWORD).containerCheckInterval(Duration.ofMillis(10)));

    private static ZooKeeperInspector inspector;

    @BeforeAll
    static void connectInspector() {
        ZooKeeperInspector.warmUp(zookeeper.server().connectString());
        inspector = new ZooKeeperInspector(zookeeper.server().connectString(), SUPER_PASSWORD);
    }

    @AfterAll
    static void closeInspector() {
        inspector.close();
    }

    @Override
    protected Map<String, Object> settings() {
        Map<String, Object> s = new HashMap<>();
        s.put("warden.lock.backend", "zookeeper");
        s.put("warden.lock.endpoints", zookeeper.server().endpoint());
        s.put("warden.lock.zookeeper.username", USER);
        s.put("warden.lock.zookeeper.password", PASSWORD);
        return s;
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return !inspector.queue(namespace, name).isEmpty();
    }
}
