package dev.warden.shedlock;

import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** ShedLock's extensible provider kit on Warden's ZooKeeper backend, against a server launched for this class. */
@DisplayName("ShedLock kit, ZooKeeper backend")
class ZooKeeperShedLockTest extends WardenShedLockKit {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", zookeeper.server().endpoint());
    }
}
