package dev.warden.testkit;

import dev.warden.testkit.internal.EtcdHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EtcdServerTest {

    private static EtcdServer server;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void readsAndWritesKeysDirectly() {
        server.put("t/a", "1");
        server.put("t/b/c", "2");
        server.put("u", "3");
        assertThat(server.keys("t/")).containsExactly("t/a", "t/b/c");
        assertThat(server.count("t/")).isEqualTo(2);
        assertThat(server.delete("t/a")).isTrue();
        assertThat(server.delete("t/a")).isFalse();
        assertThat(server.deletePrefix("t/")).isEqualTo(1);
        assertThat(server.count("t/")).isZero();
        assertThat(server.endpoints()).isEqualTo("etcd://127.0.0.1:" + server.port());
    }

    @Test
    void pausesResumesKillsAndRestartsWithItsData() {
        server.put("kept", "yes");
        server.pause();
        assertThat(server.isPaused()).isTrue();
        // SIGSTOP takes effect when the kernel next schedules each of etcd's threads: wait for it.
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        boolean answering = true;
        while (answering && System.nanoTime() - deadline < 0) {
            answering = EtcdHttp.healthy(server.clientUrls().get(0), Duration.ofMillis(300));
        }
        assertThat(answering).as("a paused member stops answering").isFalse();
        server.resume();
        assertThat(EtcdHttp.healthy(server.clientUrls().get(0), Duration.ofSeconds(3))).isTrue();
        server.kill();
        assertThat(server.isRunning()).isFalse();
        server.restart();
        assertThat(server.isRunning()).isTrue();
        assertThat(server.keys("kept")).containsExactly("kept");
    }

    @Test
    void aMissingBinaryFailsLoudlyWithHowToInstall() {
        assertThatThrownBy(() -> EtcdServer.start(Map.of("PATH", "/nonexistent")::get))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("install it: apt-get install -y etcd-server");
    }
}
