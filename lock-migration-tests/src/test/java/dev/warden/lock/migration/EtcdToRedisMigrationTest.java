package dev.warden.lock.migration;

import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole kit on the middle step of a switch from etcd back to Redis (a rollback of the common move,
 * or a move for speed): etcd's small revisions first, then Redis's clock-seeded tokens; the fault
 * clauses act on Redis, the backend moved to, while etcd stays up.
 */
@DisplayName("migrating from etcd to Redis")
class EtcdToRedisMigrationTest extends MigrationTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private static EtcdServer etcd;

    @BeforeAll
    static void startEtcd() {
        etcd = EtcdServer.start();
    }

    @AfterAll
    static void stopEtcd() {
        if (etcd != null) {
            etcd.close();
        }
    }

    @Override
    Side left() {
        return new EtcdSide(() -> etcd);
    }

    @Override
    Side target() {
        return new RedisSide(redis::server);
    }
}
