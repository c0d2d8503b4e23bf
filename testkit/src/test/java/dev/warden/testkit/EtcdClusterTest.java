package dev.warden.testkit;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

class EtcdClusterTest {

    @Test
    void survivesItsLeadersDeathAndTakesItBack() {
        try (EtcdCluster cluster = EtcdCluster.start(3)) {
            assertThat(cluster.members()).hasSize(3);
            assertThat(cluster.endpoints().split(",")).hasSize(3).allMatch(e -> e.startsWith("etcd://127.0.0.1:"));
            cluster.put("k", "v");
            EtcdMember leader = cluster.awaitLeader(Duration.ofSeconds(10));
            leader.kill();
            EtcdMember next = cluster.awaitLeader(Duration.ofSeconds(15));
            assertThat(next).isNotSameAs(leader);
            assertThat(cluster.keys("k")).containsExactly("k");
            leader.restart();
            assertThat(leader.isRunning()).isTrue();
            // Two of three members keep the quorum while one is frozen.
            cluster.others(next).stream().filter(EtcdMember::isRunning).findFirst().orElseThrow().pause();
            assertThat(cluster.isAnyPaused()).isTrue();
            cluster.put("k2", "v");
            cluster.heal();
            assertThat(cluster.isAnyPaused()).isFalse();
            assertThat(cluster.count("k")).isEqualTo(2);
        }
    }
}
