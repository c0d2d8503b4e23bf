package dev.warden.lock.zookeeper;

import dev.warden.lock.tck.SharedRecipeProcessesTest;
import dev.warden.testkit.ZooKeeperServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

@DisplayName("ZooKeeper: semaphores and read-write locks across processes")
class ZooKeeperSharedProcessesTest extends SharedRecipeProcessesTest {

    @RegisterExtension
    static final ZooKeeperServerExtension zookeeper = new ZooKeeperServerExtension();

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", zookeeper.server().endpoint());
    }
}
