package dev.warden.examples.export;

import dev.warden.examples.Await;
import dev.warden.examples.Captured;
import dev.warden.examples.Settings;
import dev.warden.testkit.RedisServerExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The copyable export job, as a user runs it: a settings file naming a real Redis (testkit's) and a 1 s TTL. */
class ExportJobExampleTest {

    private static final String KEY = "{export:" + ExportJob.LOCK_NAME + "}:lock";

    @RegisterExtension
    static final RedisServerExtension server = new RedisServerExtension();

    private static String settings(Path dir) {
        return Settings.file(dir, "export.properties", "warden.lock.backend=redis", "warden.lock.endpoints=" + server.server().uri(),
                "warden.lock.namespace=export", "warden.lock.ttl=1s", Settings.PATIENT_LOCK);
    }

    @Test
    @DisplayName("runs for more than twice its TTL on one lease, renewed by the lease keeper; exit 0")
    void outlivesItsTtl(@TempDir Path dir) throws Exception {
        Captured out = new Captured();

        int code = ExportJob.run(new String[] {settings(dir), "9", "250ms"}, out.stream);

        assertThat(code).as("output:%n%s", out).isZero();
        assertThat(out.text()).contains("9/9 written", "Done: 9 of 9 batches written", "release: RELEASED")
                .containsPattern("renewed [1-9]\\d* times");
        assertThat(server.server().command("EXISTS", KEY)).isEqualTo(0L);
    }

    @Test
    @DisplayName("when its key is deleted behind its back, the job is told, stops mid-batch and touches nothing; exit 1")
    void stopsWhenTheLeaseIsLost(@TempDir Path dir) throws Exception {
        String file = settings(dir);
        Captured out = new Captured();
        CompletableFuture<Integer> job = CompletableFuture.supplyAsync(() -> ExportJob.run(new String[] {file, "80", "3s"},
                out.stream));
        Await.until(Duration.ofSeconds(30), "the job's first batch", () -> out.text().contains(" 1/80 written") || job.isDone());
        assertThat(job).as("output:%n%s", out).isNotDone();

        assertThat(server.server().command("DEL", KEY)).isEqualTo(1L);

        assertThat(job.get(15, TimeUnit.SECONDS)).as("output:%n%s", out).isEqualTo(1);
        assertThat(out.text()).contains("LOST", "abandoned mid-write: the lease was lost", "Stopped:", "release: LOST")
                .doesNotContain("80/80 written");
    }
}
