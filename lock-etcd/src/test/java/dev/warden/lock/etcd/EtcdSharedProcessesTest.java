package dev.warden.lock.etcd;

import dev.warden.lock.tck.SharedRecipeProcessesTest;
import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

import java.util.Map;

@DisplayName("etcd: semaphores and read-write locks across processes")
class EtcdSharedProcessesTest extends SharedRecipeProcessesTest {

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
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", server.endpoints(), "warden.lock.ttl", "2s");
    }
}
