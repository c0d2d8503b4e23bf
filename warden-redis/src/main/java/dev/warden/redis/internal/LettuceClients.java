package dev.warden.redis.internal;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.SslOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.internal.HostAndPort;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.DnsResolvers;
import io.lettuce.core.resource.MappingSocketAddressResolver;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.channel.Channel;
import io.netty.handler.flush.FlushConsolidationHandler;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Lettuce clients as Warden runs them, for the lock backend and the quota engine alike: commands fail
 * within the request timeout, and at once while disconnected rather than queue, so the caller hears
 * of an outage instead of waiting on it; Lettuce reconnects in the background, at most
 * {@link #MAX_RECONNECT_DELAY} apart; a Cluster client reads its topology every
 * {@link #TOPOLOGY_REFRESH} and whenever a redirection or a lost connection suggests it changed.
 */
public final class LettuceClients {

    /** Lettuce's default backoff grows to 30 s; a lock or a deduction should notice a restarted server sooner. */
    public static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(1);
    /** How often a Cluster client reads the topology even when nothing suggests it changed. */
    public static final Duration TOPOLOGY_REFRESH = Duration.ofSeconds(2);

    private LettuceClients() {
    }

    /**
     * A client's own resources (threads, timer). Commands from many threads queue on the I/O thread one
     * write task each: the channel flushes once per batch of tasks rather than once per command.
     *
     * @param addressMap applied to every address the client connects to (a Cluster's announced
     *                   addresses seen through NAT, say); null for none
     */
    public static ClientResources resources(Function<HostAndPort, HostAndPort> addressMap) {
        DefaultClientResources.Builder b = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(Duration.ofMillis(1), MAX_RECONNECT_DELAY, 2, TimeUnit.MILLISECONDS))
                .nettyCustomizer(new NettyCustomizer() {
                    @Override
                    public void afterChannelInitialized(Channel channel) {
                        channel.pipeline().addFirst(new FlushConsolidationHandler(
                                FlushConsolidationHandler.DEFAULT_EXPLICIT_FLUSH_AFTER_FLUSHES, true));
                    }
                });
        if (addressMap != null) {
            b.socketAddressResolver(MappingSocketAddressResolver.create(DnsResolvers.UNRESOLVED, addressMap));
        }
        return b.build();
    }

    /** A standalone or Sentinel client with Warden's options; connects nothing yet. */
    public static RedisClient single(ClientResources resources, SslOptions ssl, Duration connectTimeout,
                                     Duration requestTimeout) {
        RedisClient client = RedisClient.create(resources);
        ClientOptions.Builder options = ClientOptions.builder();
        common(options, ssl, connectTimeout, requestTimeout);
        client.setOptions(options.build());
        return client;
    }

    /** A Cluster client on {@code seeds} with Warden's options; connects nothing yet. */
    public static RedisClusterClient cluster(ClientResources resources, List<RedisURI> seeds, SslOptions ssl,
                                             Duration connectTimeout, Duration requestTimeout) {
        RedisClusterClient client = RedisClusterClient.create(resources, seeds);
        ClusterClientOptions.Builder options = ClusterClientOptions.builder();
        common(options, ssl, connectTimeout, requestTimeout);
        client.setOptions(options
                .topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
                        .enablePeriodicRefresh(TOPOLOGY_REFRESH)
                        .enableAllAdaptiveRefreshTriggers()
                        .adaptiveRefreshTriggersTimeout(Duration.ofMillis(500))
                        .refreshTriggersReconnectAttempts(3)
                        .dynamicRefreshSources(true)
                        .closeStaleConnections(true)
                        .build())
                .build());
        return client;
    }

    /** The options every Warden client has (a Cluster builder's overrides apply them to it). */
    private static void common(ClientOptions.Builder options, SslOptions ssl, Duration connectTimeout,
                               Duration requestTimeout) {
        if (ssl != null) {
            options.sslOptions(ssl);
        }
        options.autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(requestTimeout))
                .socketOptions(SocketOptions.builder().connectTimeout(connectTimeout).build());
    }
}
