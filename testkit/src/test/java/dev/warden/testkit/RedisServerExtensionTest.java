package dev.warden.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class RedisServerExtensionTest {

    @RegisterExtension
    static final RedisServerExtension redis = new RedisServerExtension();

    private final RedisServer injected;

    RedisServerExtensionTest(RedisServer injected) {
        this.injected = injected;
    }

    @Test
    @Order(1)
    @DisplayName("injects the class's server into constructors and methods")
    void injectsServer(RedisServer server) {
        assertThat(server).isSameAs(redis.server()).isSameAs(injected);
        assertThat(server.command("PING")).isEqualTo("PONG");
    }

    @Test
    @Order(2)
    @DisplayName("a test may leave the server paused")
    void leavesServerPaused() {
        redis.server().pause();
    }

    @Test
    @Order(3)
    @DisplayName("the next test finds it resumed")
    void findsServerResumed() {
        assertThat(redis.server().isPaused()).isFalse();
        assertThat(redis.server().command("PING")).isEqualTo("PONG");
    }

    @Test
    @Order(4)
    @DisplayName("a test may leave the server killed")
    void leavesServerKilled() {
        redis.server().kill();
    }

    @Test
    @Order(5)
    @DisplayName("the next test finds it restarted")
    void findsServerRestarted() {
        assertThat(redis.server().isRunning()).isTrue();
        assertThat(redis.server().command("PING")).isEqualTo("PONG");
    }
}
