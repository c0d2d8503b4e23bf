package dev.warden.integration;

import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.PostgresServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Map;

/** The registry's contract on Warden's jdbc (PostgreSQL) backend, against a PostgreSQL launched for this class. */
@DisplayName("Spring Integration lock registry, jdbc (PostgreSQL) backend")
class JdbcLockRegistryTest extends WardenLockRegistryKit {

    /** Room for the kit's clients: the busiest test opens 20, each a pool and a listening connection. */
    @RegisterExtension
    static final PostgresServerExtension postgres = new PostgresServerExtension(
            PostgresServer.builder().setting("max_connections", "500"));

    @Override
    protected Map<String, Object> settings() {
        PostgresServer s = postgres.server();
        return Map.of("warden.lock.backend", "jdbc",
                "warden.lock.endpoints", "jdbc:postgresql://" + s.host() + ":" + s.port() + "/" + s.database(),
                "warden.lock.jdbc.username", s.user(), "warden.lock.jdbc.pool-size", 4);
    }

    @Override
    protected void pauseServer() {
        postgres.server().pause();
    }

    @Override
    protected void resumeServer() {
        postgres.server().resume();
    }
}
