package dev.warden.examples.demo;

import dev.warden.examples.Captured;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.DisplayName;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** One quick start, four settings files: acquire, fenced write, stale write refused, release. */
class QuickStartTest {

    @ParameterizedTest(name = "config/{0}.properties")
    @ValueSource(strings = {"redis", "etcd", "zookeeper", "jdbc"})
    @DisplayName("the same code runs on each backend; only the settings file differs")
    void eachBackend(String backend) {
        Path file = Path.of("config", backend + ".properties");
        assertThat(file).exists();
        Captured out = new Captured();
        Captured err = new Captured();

        QuickStartDemo.Result result = QuickStartDemo.execute(new String[] {"--embedded", file.toString()}, out.stream, err.stream);

        assertThat(result.exitCode()).as("stderr:%n%s", err).isZero();
        assertThat(result.backend()).isEqualTo(backend);
        assertThat(result.fencingToken()).isPositive();
        assertThat(result.fencedWriteAccepted()).isTrue();
        assertThat(result.staleWriteRefused()).isTrue();
        assertThat(result.release()).isEqualTo(ReleaseOutcome.RELEASED);
        assertThat(out.text()).contains("fencing token " + result.fencingToken());
    }

    @ParameterizedTest(name = "config/{0}.properties")
    @ValueSource(strings = {"redis", "etcd", "zookeeper", "jdbc"})
    @DisplayName("the settings files differ only in the backend's own settings")
    void filesDifferOnlyInTheBackend(String backend) throws Exception {
        String text = Files.readString(Path.of("config", backend + ".properties"));
        assertThat(text).contains("warden.lock.backend=" + backend, "warden.lock.endpoints=" + (backend.equals("jdbc") ? "jdbc:postgresql" : backend) + "://",
                "warden.lock.namespace=quickstart", "warden.lock.ttl=10s");
    }
}
