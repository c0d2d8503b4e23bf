package dev.warden.integration;

import dev.warden.testkit.EtcdServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

/** The registry's contract on Warden's etcd backend, against an etcd member launched for this class. */
@DisplayName("Spring Integration lock registry, etcd backend")
class EtcdLockRegistryTest extends WardenLockRegistryKit {

    @RegisterExtension
    static final EtcdServerExtension etcd = new EtcdServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.server().endpoints());
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s (as in warden-shedlock's kit). */
    @Override
    protected Duration renewalTtl() {
        return Duration.ofSeconds(2);
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
        etcd.server().pause();
    }

    @Override
    protected void resumeServer() {
        etcd.server().resume();
    }
}
