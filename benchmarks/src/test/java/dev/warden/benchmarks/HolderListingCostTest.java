package dev.warden.benchmarks;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** The listing measurement runs briefly on every backend, so a change that breaks it fails the build, not a later run. */
class HolderListingCostTest {

    @Test
    @DisplayName("lists exactly the holders it took on Redis, Redis Cluster, etcd and ZooKeeper, and prints a line for each")
    void runsOnEveryBackend() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            HolderListingCost.main(new String[] {"50", "1"});
        } finally {
            System.setOut(original);
        }
        String out = captured.toString(StandardCharsets.UTF_8);
        assertThat(out.lines().filter(l -> l.startsWith("LISTING ")).map(l -> l.split(" ")[1]))
                .containsExactly("redis", "redis-cluster", "etcd", "zookeeper");
        assertThat(out).contains("holders=50");
    }
}
