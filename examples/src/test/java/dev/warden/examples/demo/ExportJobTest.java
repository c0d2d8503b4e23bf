package dev.warden.examples.demo;

import dev.warden.examples.Captured;
import dev.warden.lock.ReleaseOutcome;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** The long export job: kept alive past several TTLs by the lease keeper, stopped by a loss. */
class ExportJobTest {

    @Test
    @DisplayName("the job holds its lock for more than 3 × the TTL while the lease keeper renews it")
    void outlivesItsTtl() {
        Captured out = new Captured();
        Captured err = new Captured();

        ExportJobDemo.Result result = ExportJobDemo.execute(new String[] {"--ttl", "2s", "--duration", "6500ms", "--batches", "13"},
                out.stream, err.stream);

        assertThat(result.exitCode()).as("stderr:%n%s", err).isZero();
        ExportJobDemo.Summary s = result.summary().orElseThrow();
        assertThat(s.completed()).isTrue();
        assertThat(s.written()).isEqualTo(13);
        assertThat(s.lostReason()).isEmpty();
        assertThat(s.ttlsHeld()).isGreaterThan(3);
        assertThat(s.renewals()).isPositive();
        assertThat(s.release()).contains(ReleaseOutcome.RELEASED);
        assertThat(out.text()).contains("13/13 written", "Done: 13 of 13 batches");
    }

    @ParameterizedTest(name = "--lock {0}")
    @ValueSource(strings = {"redis", "etcd", "zookeeper"})
    @DisplayName("when the lock is deleted behind its back, the job stops: no batch starts after the loss")
    void stopsWhenTheLeaseIsLost(String lock) {
        Captured out = new Captured();
        Captured err = new Captured();

        ExportJobDemo.Result result = ExportJobDemo.execute(new String[] {"--lock", lock, "--ttl", "2s", "--duration", "20s",
                "--batches", "40", "--lose-after", "1s"}, out.stream, err.stream);

        assertThat(result.exitCode()).as("stderr:%n%s", err).isZero();
        ExportJobDemo.Summary s = result.summary().orElseThrow();
        assertThat(s.lossInjected()).isTrue();
        assertThat(s.lostReason()).isPresent();
        assertThat(s.completed()).isFalse();
        assertThat(s.written()).isLessThan(40);
        assertThat(s.batchStartedAfterLoss()).isFalse();
        assertThat(s.release()).contains(ReleaseOutcome.LOST);
        assertThat(out.text()).contains("[chaos]", "LOST", "Stopped:");
    }

    @Test
    @DisplayName("when the server freezes, the lease expires on the local clock and the job stops")
    void frozenServer() {
        Captured out = new Captured();
        Captured err = new Captured();

        ExportJobDemo.Result result = ExportJobDemo.execute(new String[] {"--ttl", "2s", "--duration", "20s", "--batches", "40",
                "--lose-after", "1s", "--loss", "pause"}, out.stream, err.stream);

        assertThat(result.exitCode()).as("stderr:%n%s", err).isZero();
        ExportJobDemo.Summary s = result.summary().orElseThrow();
        assertThat(s.lostReason()).isPresent();
        assertThat(s.completed()).isFalse();
        assertThat(s.batchStartedAfterLoss()).isFalse();
    }
}
