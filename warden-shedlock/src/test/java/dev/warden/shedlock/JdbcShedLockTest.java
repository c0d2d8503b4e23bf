package dev.warden.shedlock;

import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** ShedLock's extensible provider kit on Warden's jdbc (PostgreSQL) backend, against a PostgreSQL launched for this class. */
@DisplayName("ShedLock kit, jdbc (PostgreSQL) backend")
class JdbcShedLockTest extends WardenShedLockKit {

    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(
            PostgresServer.builder().setting("max_connections", "300"));

    @Override
    protected Map<String, Object> settings() {
        PostgresServer s = postgres.server();
        return Map.of("warden.lock.backend", "jdbc",
                "warden.lock.endpoints", "jdbc:postgresql://" + s.host() + ":" + s.port() + "/" + s.database(),
                "warden.lock.jdbc.username", s.user(), "warden.lock.jdbc.pool-size", 4);
    }
}
