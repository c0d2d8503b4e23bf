package dev.warden.integration;

import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

/** The registry's contract on Warden's ZooKeeper backend, against a server launched for this class. */
@DisplayName("Spring Integration lock registry, ZooKeeper backend")
class ZooKeeperLockRegistryTest extends WardenLockRegistryKit {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", zookeeper.server().endpoint());
    }

    /**
     * By default ({@code warden.lock.zookeeper.lost-on=suspended}) a suspended connection ends every lease, and the
     * ZooKeeper client suspends after two thirds of the session timeout (the TTL) without an answer: 30 s keeps a
     * freeze of a few seconds from ending the lease.
     */
    @Override
    protected Duration outageTtl() {
        return Duration.ofSeconds(30);
    }

    @Override
    protected void pauseServer() {
        zookeeper.server().pause();
    }

    @Override
    protected void resumeServer() {
        zookeeper.server().resume();
    }
}
