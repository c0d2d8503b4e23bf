package dev.warden.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PostgresServerExtensionTest {

    @RegisterExtension
    static final PostgresServerExtension postgres =
            new PostgresServerExtension(PostgresServer.builder().setting("max_connections", "30"));

    private final PostgresServer injected;

    PostgresServerExtensionTest(PostgresServer injected) {
        this.injected = injected;
    }

    @Test
    @Order(1)
    @DisplayName("injects the class's server, started from the builder, into constructors and methods")
    void injectsServer(PostgresServer server) {
        assertThat(server).isSameAs(postgres.server()).isSameAs(injected);
        assertThat(server.psql("show max_connections")).isEqualTo("30");
        server.psql("create table kept (x int); insert into kept values (1)");
    }

    @Test
    @Order(2)
    @DisplayName("a test may leave the server paused")
    void leavesServerPaused() {
        postgres.server().pause();
    }

    @Test
    @Order(3)
    @DisplayName("the next test finds it resumed")
    void findsServerResumed() {
        assertThat(postgres.server().isPaused()).isFalse();
        assertThat(postgres.server().psql("select 1")).isEqualTo("1");
    }

    @Test
    @Order(4)
    @DisplayName("a test may leave the server killed")
    void leavesServerKilled() {
        postgres.server().kill();
    }

    @Test
    @Order(5)
    @DisplayName("the next test finds it restarted")
    void findsServerRestartedAfterKill() {
        assertThat(postgres.server().isRunning()).isTrue();
        assertThat(postgres.server().psql("select 1")).isEqualTo("1");
    }

    @Test
    @Order(6)
    @DisplayName("a test may leave the server stopped, even while paused")
    void leavesServerStopped() {
        postgres.server().pause();
        postgres.server().stop();
    }

    @Test
    @Order(7)
    @DisplayName("the next test finds it restarted, with the data of earlier tests")
    void findsServerRestartedAfterStop() {
        assertThat(postgres.server().isRunning()).isTrue();
        assertThat(postgres.server().isPaused()).isFalse();
        assertThat(postgres.server().psql("select x from kept")).isEqualTo("1");
    }
}
