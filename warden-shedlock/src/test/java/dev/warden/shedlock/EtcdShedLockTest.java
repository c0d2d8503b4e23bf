package dev.warden.shedlock;

import dev.warden.testkit.EtcdServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;

/** ShedLock's extensible provider kit on Warden's etcd backend, against an etcd member launched for this class. */
@DisplayName("ShedLock kit, etcd backend")
class EtcdShedLockTest extends WardenShedLockKit {

    @RegisterExtension
    static final EtcdServerExtension etcd = new EtcdServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", etcd.server().endpoints());
    }

    /** etcd leases are whole seconds, and its minimum TTL with default timing is 2 s. */
    @Override
    protected Duration ttl() {
        return Duration.ofSeconds(2);
    }
}
