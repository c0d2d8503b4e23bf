package dev.warden.benchmarks;

import dev.warden.benchmarks.internal.Rows;
import dev.warden.benchmarks.internal.Runner;
import dev.warden.benchmarks.internal.ServerCpu;
import dev.warden.testkit.EtcdServer;
import dev.warden.testkit.PostgresServer;
import dev.warden.testkit.RedisServer;
import dev.warden.testkit.ZooKeeperServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every row of the benchmark table runs, briefly, on real servers: a baseline that errors (the limit row
 * once sent the lock's scripts arguments they no longer took, and measured 0 ops/s) fails the build, not
 * a later benchmark run. Nothing here measures speed.
 */
class EveryRowRunsTest {

    static RedisServer redis;
    static EtcdServer etcd;
    static ZooKeeperServer zookeeper;
    static PostgresServer postgres;

    @BeforeAll
    static void start() {
        redis = RedisServer.start();
        etcd = EtcdServer.start();
        zookeeper = ZooKeeperServer.start();
        postgres = PostgresServer.start();
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable server : new AutoCloseable[] {redis, etcd, zookeeper, postgres}) {
            try {
                if (server != null) {
                    server.close();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    @TestFactory
    @DisplayName("each lock and quota row runs without an error, and its end state verifies")
    Stream<DynamicTest> everyRow() {
        Rows.Servers servers = new Rows.Servers(redis, etcd, zookeeper, postgres);
        Runner runner = new Runner(Duration.ofMillis(50), Duration.ofMillis(300));
        // A row that completed nothing in 300 ms on a busy machine (CI builds two modules at once) gets one
        // longer run: a row that errors still fails at once, one that makes no progress in 3 s fails too.
        Runner patient = new Runner(Duration.ofMillis(200), Duration.ofSeconds(3));
        Map<Workload.Server, ServerCpu> cpu = ServerCpu.ofServers(redis);
        List<Supplier<Workload>> rows = new java.util.ArrayList<>(Rows.locks(servers));
        rows.addAll(Rows.recipes(servers));
        rows.addAll(Rows.quota(servers));
        return rows.stream().map(make -> {
            String name;
            try (Workload w = make.get()) {
                name = w.scenario() + " / " + w.implementation();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return DynamicTest.dynamicTest(name, () -> {
                try (Workload w = make.get()) {
                    Result r = runner.run(w, 2, cpu.get(w.server()));
                    assertThat(r.errors()).as("errors").isZero();
                    if (r.operations() == 0) {
                        try (Workload again = make.get()) {
                            r = patient.run(again, 2, cpu.get(again.server()));
                        }
                        assertThat(r.errors()).as("errors in the longer run").isZero();
                    }
                    assertThat(r.operations()).as("operations").isPositive();
                    // The row's server CPU is read from the right process: a row on a server reports a figure.
                    assertThat(Double.isNaN(r.serverCpuMicros())).as("server CPU missing for a row on " + w.server())
                            .isEqualTo(w.server() == Workload.Server.NONE);
                }
            });
        });
    }
}
