package dev.warden.lock.tck;

import dev.warden.lock.tck.internal.SharedRecipeRuns;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One lock across operating-system processes: worker JVMs, each with a few threads, take and release the
 * lock in a loop, and the merged history is checked: never two holders at once, and of two grants the
 * later has the higher token. A backend's test extends this (or {@link SharedRecipeProcessesTest}, which adds
 * semaphores and read-write locks) and says how to reach the backend.
 *
 * <p>Size: {@code -Dwarden.processes=2 -Dwarden.processes.threads=2 -Dwarden.processes.seconds=20} is two
 * JVMs × 2 threads for 20 s; the build runs 2 processes × 2 threads for 3 s.
 */
public abstract class LockProcessesTest {

    /** Run after each test: kills the workers still running and deletes their files. */
    final List<Runnable> cleanUp = new ArrayList<>();
    /** Every test's names live here. */
    final String namespace = "processes-" + UUID.randomUUID();

    /** Settings that reach the backend: at least backend and endpoints. */
    protected abstract Map<String, Object> settings();

    @AfterEach
    void killWorkers() {
        cleanUp.forEach(Runnable::run);
    }

    @Test
    @DisplayName("a lock taken by threads of several processes: one holder at a time, tokens in grant order")
    void lockAcrossProcesses() throws Exception {
        int processes = Integer.getInteger("warden.processes", 2);
        int threads = Integer.getInteger("warden.processes.threads", 2);
        Duration length = Duration.ofSeconds(Integer.getInteger("warden.processes.seconds", 3));
        List<String> roles = new ArrayList<>();
        for (int p = 0; p < processes; p++) {
            roles.add("x".repeat(threads));
        }
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.namespace", namespace);
        s.putIfAbsent("warden.lock.ttl", "2s");
        SharedRecipeRuns.Outcome outcome = SharedRecipeRuns.run("job", roles, 0, 1, length, s, cleanUp::add);
        System.out.printf("lock across %d processes × %d threads for %d s: grants per process %s, %d violations%n",
                processes, threads, length.toSeconds(), outcome.grants(), outcome.violations().size());
        assertThat(outcome.violations()).isEmpty();
        assertThat(outcome.grants()).as("grants per process").allSatisfy(g -> assertThat(g).isPositive());
        assertThat(outcome.history().grants()).as("grants in the merged history")
                .isEqualTo(outcome.grants().stream().mapToLong(Long::longValue).sum());
    }
}
