package dev.warden.lock.tck;

import dev.warden.lock.tck.internal.SharedRecipeRuns;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Semaphores and read-write locks across operating-system processes, besides the lock
 * ({@link LockProcessesTest}): worker JVMs take permits or sides in
 * a loop against one name, and the merged history is checked ({@link LockHistory#shareViolations}). A
 * backend's test extends this and says how to reach the backend.
 *
 * <p>Size: {@code -Dwarden.processes=8 -Dwarden.processes.seconds=20} for the full run (8 processes ×
 * 4 threads for 20 s); the build runs 3 processes for 3 s, which keeps it within its time budget and still
 * puts three JVMs, each with several threads, on one name.
 */
public abstract class SharedRecipeProcessesTest extends LockProcessesTest {

    private static int processes() {
        return Integer.getInteger("warden.processes", 3);
    }

    private static Duration length() {
        return Duration.ofSeconds(Integer.getInteger("warden.processes.seconds", 3));
    }

    @Test
    @DisplayName("a semaphore of 3: every process's 4 threads taking 1 or 2 permits never hold more than 3 together")
    void semaphoreAcrossProcesses() throws Exception {
        List<String> roles = new ArrayList<>();
        for (int p = 0; p < processes(); p++) {
            roles.add(p % 2 == 0 ? "1112" : "1211");
        }
        SharedRecipeRuns.Outcome outcome = SharedRecipeRuns.run("permits", roles, 3, 3, length(), workerSettings(),
                cleanUp::add);
        report("semaphore", outcome);
        assertThat(outcome.violations()).isEmpty();
        assertThat(outcome.grants()).as("grants per process").allSatisfy(g -> assertThat(g).isPositive());
    }

    /** What a run did, in the test's output: the figures a full-size run is quoted by. */
    private static void report(String what, SharedRecipeRuns.Outcome outcome) {
        System.out.printf("%s across %d processes for %d s: grants per process %s, by weight %s, %d violations%n", what,
                processes(), length().toSeconds(), outcome.grants(), outcome.grantsByWeight(), outcome.violations().size());
    }

    @Test
    @DisplayName("a read-write lock: 16 readers and 2 writers spread over the processes, no reader beside a writer, every writer progressing")
    void readWriteAcrossProcesses() throws Exception {
        int n = processes();
        StringBuilder[] roles = new StringBuilder[n];
        for (int p = 0; p < n; p++) {
            roles[p] = new StringBuilder();
        }
        for (int w = 0; w < 2; w++) {
            roles[w % n].append('w');
        }
        for (int r = 0; r < 16; r++) {
            roles[r % n].append('r');
        }
        List<String> all = new ArrayList<>();
        for (StringBuilder b : roles) {
            all.add(b.toString());
        }
        SharedRecipeRuns.Outcome outcome = SharedRecipeRuns.run("table", all, 0, SharedRecipeRuns.WRITER, length(),
                workerSettings(), cleanUp::add);
        report("read-write", outcome);
        assertThat(outcome.violations()).isEmpty();
        assertThat(outcome.grantsByWeight().getOrDefault(SharedRecipeRuns.WRITER, 0L)).as("writers' grants").isPositive();
        assertThat(outcome.grantsByWeight().getOrDefault(1, 0L)).as("readers' grants").isPositive();
        assertThat(outcome.grants()).as("grants per process").allSatisfy(g -> assertThat(g).isPositive());
    }

    private Map<String, Object> workerSettings() {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.namespace", namespace);
        s.putIfAbsent("warden.lock.ttl", "2s");
        return s;
    }
}
