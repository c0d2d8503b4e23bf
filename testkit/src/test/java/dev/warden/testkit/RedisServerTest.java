package dev.warden.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisServerTest {

    private static final Duration SHORT = Duration.ofMillis(300);

    @Test
    @DisplayName("starts a local redis-server on a loopback port that answers PING")
    void startsAndAnswersPing() {
        try (RedisServer redis = RedisServer.start()) {
            assertThat(redis.isRunning()).isTrue();
            assertThat(redis.host()).isEqualTo("127.0.0.1");
            assertThat(redis.uri()).isEqualTo("redis://127.0.0.1:" + redis.port());
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    @DisplayName("command returns typed replies and throws error replies")
    void commandReturnsTypedReplies() {
        try (RedisServer redis = RedisServer.start()) {
            assertThat(redis.command("SET", "k", "välue")).isEqualTo("OK");
            assertThat(redis.command("GET", "k")).isEqualTo("välue");
            assertThat(redis.command("GET", "missing")).isNull();
            assertThat(redis.command("INCR", "n")).isEqualTo(1L);
            assertThat(redis.command("RPUSH", "list", "a", "b")).isEqualTo(2L);
            assertThat(redis.command("LRANGE", "list", "0", "-1")).isEqualTo(List.of("a", "b"));
            assertThat(redis.command("EVAL", "return {1, 'x', false}", "0")).isEqualTo(Arrays.asList(1L, "x", null));
            assertThatThrownBy(() -> redis.command("INCR", "list"))
                    .isInstanceOfSatisfying(RedisReplyException.class, e -> assertThat(e.code()).isEqualTo("WRONGTYPE"));
            assertThatThrownBy(() -> redis.command("EVALSHA", "0000000000000000000000000000000000000000", "0"))
                    .isInstanceOfSatisfying(RedisReplyException.class, e -> assertThat(e.code()).isEqualTo("NOSCRIPT"));
        }
    }

    @Test
    @DisplayName("defaults: no RDB snapshots and no append-only file")
    void defaultsDisablePersistence() {
        try (RedisServer redis = RedisServer.start()) {
            assertThat(redis.command("CONFIG", "GET", "save")).isEqualTo(List.of("save", ""));
            assertThat(redis.command("CONFIG", "GET", "appendonly")).isEqualTo(List.of("appendonly", "no"));
        }
    }

    @Test
    @DisplayName("builder options reach the server")
    void builderOptionsApply() {
        try (RedisServer redis = RedisServer.builder()
                .maxMemory("2mb")
                .config("maxmemory-policy", "noeviction")
                .start()) {
            assertThat(redis.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "2097152"));
            assertThat(redis.command("CONFIG", "GET", "maxmemory-policy")).isEqualTo(List.of("maxmemory-policy", "noeviction"));
        }
    }

    @Test
    @DisplayName("builder refuses directives testkit owns")
    void builderRefusesReservedDirectives() {
        assertThatThrownBy(() -> RedisServer.builder().config("port", "6379"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("pause makes a command time out; resume makes it answer again")
    void pauseAndResume() {
        try (RedisServer redis = RedisServer.start()) {
            redis.pause();
            assertThat(redis.isPaused()).isTrue();
            assertThatThrownBy(() -> redis.command(SHORT, "PING"))
                    .isInstanceOf(UncheckedIOException.class)
                    .hasCauseInstanceOf(SocketTimeoutException.class);

            redis.resume();
            assertThat(redis.isPaused()).isFalse();
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    @DisplayName("kill stops the server; restart brings it back on the same port")
    void killAndRestart() {
        try (RedisServer redis = RedisServer.start()) {
            int port = redis.port();
            redis.kill();
            assertThat(redis.isRunning()).isFalse();
            assertThatThrownBy(() -> redis.command(SHORT, "PING")).isInstanceOf(UncheckedIOException.class);

            redis.restart();
            assertThat(redis.isRunning()).isTrue();
            assertThat(redis.port()).isEqualTo(port);
            assertThat(redis.command("PING")).isEqualTo("PONG");
        }
    }

    @Test
    @DisplayName("kill while paused still kills")
    void killWhilePaused() {
        try (RedisServer redis = RedisServer.start()) {
            redis.pause();
            redis.kill();
            assertThat(redis.isRunning()).isFalse();
            assertThat(redis.isPaused()).isFalse();
        }
    }

    @Test
    @DisplayName("without an append-only file, data is lost on kill")
    void dataLostWithoutAppendOnly() {
        try (RedisServer redis = RedisServer.start()) {
            redis.command("SET", "k", "v");
            redis.kill();
            redis.restart();
            assertThat(redis.command("EXISTS", "k")).isEqualTo(0L);
        }
    }

    @Test
    @DisplayName("with appendonly and fsync always, a write survives kill and restart")
    void appendOnlySurvivesKill() {
        try (RedisServer redis = RedisServer.builder().appendOnly(true).appendFsyncAlways().start()) {
            redis.command("SET", "k", "v");
            redis.kill();
            redis.restart();
            assertThat(redis.command("GET", "k")).isEqualTo("v");
        }
    }

    @Test
    @DisplayName("stop on a paused server still stops it and frees the port")
    void stopWhilePaused() {
        RedisServer redis = RedisServer.start();
        redis.pause();
        redis.close();
        assertThat(redis.isRunning()).isFalse();
        assertThatThrownBy(() -> redis.command(SHORT, "PING")).isInstanceOf(UncheckedIOException.class);
        redis.close();
    }

    @Nested
    @DisplayName("resolution from the environment")
    class Environment {

        @Test
        @DisplayName("WARDEN_REDIS_URI is used as is and refuses fault injection")
        void externalUri() {
            try (RedisServer launched = RedisServer.start()) {
                Map<String, String> env = Map.of("WARDEN_REDIS_URI", launched.uri());
                RedisServer external = RedisServer.builder().maxMemory("3mb").environment(env::get).start();

                assertThat(external.port()).isEqualTo(launched.port());
                assertThat(external.command("CONFIG", "GET", "maxmemory")).isEqualTo(List.of("maxmemory", "3145728"));
                assertThatThrownBy(external::pause)
                        .isInstanceOf(UnsupportedOperationException.class)
                        .hasMessageContaining("WARDEN_REDIS_URI");
                assertThatThrownBy(external::kill).isInstanceOf(UnsupportedOperationException.class);

                external.close();
                assertThat(launched.command("PING")).isEqualTo("PONG");
            }
        }

        @Test
        @DisplayName("WARDEN_REDIS_SERVER names the binary to launch")
        void explicitBinary() {
            Map<String, String> env = Map.of("WARDEN_REDIS_SERVER", "/usr/bin/redis-server");
            try (RedisServer redis = RedisServer.builder().environment(env::get).start()) {
                assertThat(redis.command("PING")).isEqualTo("PONG");
            }
        }

        @Test
        @DisplayName("WARDEN_REDIS_SERVER that is not an executable fails loudly")
        void badExplicitBinary(@TempDir Path dir) {
            Map<String, String> env = Map.of("WARDEN_REDIS_SERVER", dir.resolve("nope").toString());
            assertThatThrownBy(() -> RedisServer.builder().environment(env::get).start())
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("WARDEN_REDIS_SERVER");
        }
    }
}
