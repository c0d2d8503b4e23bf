package dev.warden.examples.quickstart;

import dev.warden.examples.Captured;
import dev.warden.examples.Config;
import dev.warden.examples.Settings;
import dev.warden.lock.ReleaseOutcome;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The copyable quick start, as a user runs it: a settings file naming a real Redis (testkit's). */
class QuickStartExampleTest {

    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    @Test
    @DisplayName("acquires, writes with its token, sees the older token refused, releases; exit 0")
    void runsFromItsSettingsFile(@TempDir Path dir) throws Exception {
        String file = Settings.file(dir, "redis.properties", "warden.lock.backend=redis",
                "warden.lock.endpoints=" + server.server().uri(), "warden.lock.namespace=quickstart", "warden.lock.ttl=10s", Settings.PATIENT_LOCK);
        Captured out = new Captured();

        int code = QuickStart.run(new String[] {file}, out.stream);

        assertThat(code).as("output:%n%s", out).isZero();
        assertThat(out.text()).containsPattern("acquired 'daily-report' on redis: fencing token [1-9]\\d*, lease valid for \\d+ ms")
                .containsPattern("fenced write with token [1-9]\\d*: accepted")
                .containsPattern("write with the older token \\d+: refused")
                .contains("released: RELEASED");
        assertThat(server.server().command("EXISTS", "{quickstart:daily-report}:lock")).isEqualTo(0L);
    }

    @Test
    @DisplayName("each grant carries a higher fencing token than the last")
    void tokensIncrease(@TempDir Path dir) throws Exception {
        String file = Settings.file(dir, "redis.properties", "warden.lock.backend=redis",
                "warden.lock.endpoints=" + server.server().uri(), "warden.lock.namespace=tokens", Settings.PATIENT_LOCK);
        Captured out = new Captured();

        QuickStart.Result first = QuickStart.quickStart(Config.load(file), out.stream);
        QuickStart.Result second = QuickStart.quickStart(Config.load(file), out.stream);

        assertThat(first.backend()).isEqualTo("redis");
        assertThat(second.fencingToken()).isGreaterThan(first.fencingToken());
        assertThat(second.fencedWriteAccepted()).isTrue();
        assertThat(second.staleWriteRefused()).isTrue();
        assertThat(second.release()).isEqualTo(ReleaseOutcome.RELEASED);
    }

    @Test
    @DisplayName("nothing at the file's endpoint: a message naming the reason, exit 3")
    void unreachable(@TempDir Path dir) throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0)) {
            closed = s.getLocalPort();
        }
        String file = Settings.file(dir, "redis.properties", "warden.lock.backend=redis",
                "warden.lock.endpoints=redis://127.0.0.1:" + closed, "warden.lock.outage-tolerance=0s",
                "warden.lock.connect-timeout=1s");
        Captured out = new Captured();

        assertThat(QuickStart.run(new String[] {file}, out.stream)).as("output:%n%s", out).isEqualTo(3);
        assertThat(out.text()).startsWith("quick-start: ").contains("UNAVAILABLE");
    }
}
