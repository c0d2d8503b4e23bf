package dev.warden.lock.redis.internal;

import io.lettuce.core.RedisCredentials;
import io.lettuce.core.RedisURI;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TopologyTest {

    @Test
    void oneServer() {
        Topology t = Topology.of(List.of("redis://:pw@h:6380/2"));
        assertThat(t).isInstanceOf(Topology.Standalone.class);
        assertThat(t.describe()).isEqualTo("redis://h:6380/2");
        assertThat(t.channels()).isEqualTo(Topology.Channels.PLAIN);
    }

    @Test
    void sentinelsWithTheirMasterAndTheDataNodesCredentials() {
        Topology t = Topology.of(List.of("redis-sentinel://app:pw@s1", "s2:26380", "s3:26381/pay%20ments"));
        RedisURI uri = ((Topology.Sentinel) t).uri();
        assertThat(uri.getSentinelMasterId()).isEqualTo("pay ments");
        assertThat(uri.getSentinels()).extracting(RedisURI::getHost, RedisURI::getPort)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("s1", 26379), org.assertj.core.groups.Tuple.tuple("s2", 26380),
                        org.assertj.core.groups.Tuple.tuple("s3", 26381));
        RedisCredentials credentials = uri.getCredentialsProvider().resolveCredentials().block();
        assertThat(credentials.getUsername()).isEqualTo("app");
        assertThat(new String(credentials.getPassword())).isEqualTo("pw");
        assertThat(t.describe()).isEqualTo("redis-sentinel://s1:26379,s2:26380,s3:26381/pay ments").doesNotContain("pw");
        assertThat(t.channels()).isEqualTo(Topology.Channels.PLAIN);
    }

    @Test
    void clusterSeedsAsLockClientCreateWritesThem() {
        Topology t = Topology.of(List.of("rediss-cluster://:pw@n1:7000", "rediss-cluster://n2"));
        List<RedisURI> seeds = ((Topology.Cluster) t).seeds();
        assertThat(seeds).extracting(RedisURI::getPort).containsExactly(7000, 6379);
        assertThat(seeds).allSatisfy(s -> {
            assertThat(s.isSsl()).isTrue();
            assertThat(new String(s.getCredentialsProvider().resolveCredentials().block().getPassword())).isEqualTo("pw");
        });
        assertThat(t.describe()).isEqualTo("rediss-cluster://n1:7000,n2:6379");
        assertThat(t.channels()).isEqualTo(Topology.Channels.SHARDED);
    }

    @Test
    void redactsEveryUserInfo() {
        assertThat(dev.warden.lock.Redaction.redact("redis-cluster://u:pw@h1,u:pw@h2")).isEqualTo("redis-cluster://***@h1,***@h2");
    }
}
