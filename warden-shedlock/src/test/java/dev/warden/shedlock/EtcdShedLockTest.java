package dev.warden.shedlock;

import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.util.Map;

/** ShedLock's extensible provider kit on Warden's etcd backend, against an etcd member launched for this class. */
@DisplayName("ShedLock kit, etcd backend")
class EtcdShedLockTest extends WardenShedLockKit {

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

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", server.endpoints());
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }
}
