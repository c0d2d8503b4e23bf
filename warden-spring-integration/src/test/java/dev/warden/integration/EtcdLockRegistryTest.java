package dev.warden.integration;

import dev.warden.testkit.EtcdServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.util.Map;

/** The registry's contract on Warden's etcd backend, against an etcd member launched for this class. */
@DisplayName("Spring Integration lock registry, etcd backend")
class EtcdLockRegistryTest extends WardenLockRegistryKit {

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

    /**
     * A call to a frozen etcd fails after two request timeouts, so the freeze lasts longer than on Redis: 20 s keeps
     * the lease through it with room to spare.
     */
    @Override
    protected Duration outageTtl() {
        return Duration.ofSeconds(20);
    }

    @Override
    protected void pauseServer() {
        server.pause();
    }

    @Override
    protected void resumeServer() {
        server.resume();
    }
}
