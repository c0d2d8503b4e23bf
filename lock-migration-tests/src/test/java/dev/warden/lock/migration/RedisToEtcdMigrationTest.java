package dev.warden.lock.migration;

import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole kit on the middle step of a switch from Redis to etcd, the move fund-critical services
 * make; the fault clauses act on etcd, the backend moved to, while Redis stays up.
 */
@DisplayName("migrating from Redis to etcd")
class RedisToEtcdMigrationTest extends MigrationTest {

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

    @BeforeEach
    void heal() {
        etcd.heal();
    }

    @Override
    Side left() {
        return new RedisSide(redis::server);
    }

    @Override
    Side target() {
        return new EtcdSide(() -> etcd);
    }
}
