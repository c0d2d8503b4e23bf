package dev.warden.benchmarks;

import dev.warden.benchmarks.internal.Report;
import dev.warden.benchmarks.internal.Runner;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RunnerTest {

    /** Counts in memory; {@code lose} drops every n-th unit so verification must catch it. */
    private static final class Counting implements Workload {
        final AtomicLong done = new AtomicLong();
        final int lose;

        Counting(int lose) {
            this.lose = lose;
        }

        @Override
        public String scenario() {
            return "count";
        }

        @Override
        public String implementation() {
            return lose == 0 ? "exact" : "lossy";
        }

        @Override
        public void setUp(int threads) {
        }

        @Override
        public Operation operation(int index) {
            AtomicLong calls = new AtomicLong();
            return () -> {
                if (lose == 0 || calls.incrementAndGet() % lose != 0) {
                    done.incrementAndGet();
                }
            };
        }

        @Override
        public void verify(long completed) {
            if (done.get() != completed) {
                throw new IllegalStateException("did " + done.get() + " but acknowledged " + completed);
            }
        }

        @Override
        public void close() {
        }
    }

    @Test
    @DisplayName("a run counts operations, records latency and writes a table with ratios")
    void runsAndReports() throws Exception {
        Runner runner = new Runner(Duration.ofMillis(50), Duration.ofMillis(200));
        Result a = runner.run(new Counting(0), 2, null);
        assertThat(a.operations()).isPositive();
        assertThat(a.throughput()).isPositive();
        assertThat(a.latencyP99Micros()).isGreaterThanOrEqualTo(a.latencyP50Micros());
        String table = Report.markdown(List.of(a, a));
        assertThat(table).contains("| count | 2 | exact |").contains("1.00×");
        assertThat(a.toJson()).startsWith("{\"scenario\":\"count\"");
    }

    @Test
    @DisplayName("a wrong end state fails the run")
    void verificationFails() {
        Runner runner = new Runner(Duration.ofMillis(10), Duration.ofMillis(50));
        assertThatThrownBy(() -> runner.run(new Counting(3), 1, null)).hasMessageContaining("acknowledged");
    }
}
