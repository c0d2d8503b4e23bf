package dev.warden.redis.internal;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.resource.ClientResources;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The options a client is built with (nothing connects: the options are the subject). */
class LettuceClientsTest {

    private static final Duration CONNECT = Duration.ofMillis(1500);
    private static final Duration REQUEST = Duration.ofMillis(700);

    @Test
    void singleRejectsWhileDisconnectedAndBoundsEveryCall() {
        ClientResources resources = LettuceClients.resources(null);
        RedisClient client = LettuceClients.single(resources, null, CONNECT, REQUEST);
        try {
            ClientOptions o = client.getOptions();
            assertThat(o.isAutoReconnect()).isTrue();
            assertThat(o.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
            assertThat(o.getSocketOptions().getConnectTimeout()).isEqualTo(CONNECT);
            assertThat(Duration.ofNanos(o.getTimeoutOptions().getSource().getTimeUnit().toNanos(
                    o.getTimeoutOptions().getSource().getTimeout(null)))).isEqualTo(REQUEST);
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown();
        }
    }

    @Test
    void clusterHasTheSameOptionsAndRefreshesItsTopology() {
        ClientResources resources = LettuceClients.resources(hostAndPort -> hostAndPort);
        RedisClusterClient client = LettuceClients.cluster(resources, List.of(RedisURI.create("redis://127.0.0.1:7000")),
                null, CONNECT, REQUEST);
        try {
            ClusterClientOptions o = (ClusterClientOptions) client.getOptions();
            assertThat(o.getDisconnectedBehavior()).isEqualTo(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS);
            assertThat(o.getSocketOptions().getConnectTimeout()).isEqualTo(CONNECT);
            assertThat(Duration.ofNanos(o.getTimeoutOptions().getSource().getTimeUnit().toNanos(
                    o.getTimeoutOptions().getSource().getTimeout(null)))).isEqualTo(REQUEST);
            assertThat(o.getTopologyRefreshOptions().isPeriodicRefreshEnabled()).isTrue();
            assertThat(o.getTopologyRefreshOptions().getRefreshPeriod()).isEqualTo(LettuceClients.TOPOLOGY_REFRESH);
            assertThat(o.getTopologyRefreshOptions().getAdaptiveRefreshTriggers()).isNotEmpty();
        } finally {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
            resources.shutdown();
        }
    }
}
