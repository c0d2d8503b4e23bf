package dev.warden.lock.redis;

import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.RedisCluster;
import dev.warden.testkit.RedisClusterExtension;
import dev.warden.testkit.TcpProxy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The core and fault contracts, unchanged (a holder's process killed or frozen is
 * RedisLockContractTest's), on a Redis Cluster (three primaries, three replicas)
 * launched for this class. "The server" of the fault clauses is the whole cluster: paused, every node
 * is frozen (none can declare another failed); a client cut off behind the proxy reaches every node
 * only through it.
 */
@DisplayName("Redis backend on Cluster")
class RedisClusterLockContractTest extends LockFaultContractTest {

    @RegisterExtension
    static final RedisClusterExtension redis = new RedisClusterExtension();

    private static RedisCluster cluster() {
        return redis.cluster();
    }

    private static String key(String namespace, String name) {
        return "{" + namespace + ":" + name + "}:lock";
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", cluster().uri());
    }

    @Override
    protected InetSocketAddress serverAddress() {
        return serverAddresses().get(0);
    }

    @Override
    protected List<InetSocketAddress> serverAddresses() {
        return cluster().nodes().stream().map(n -> new InetSocketAddress(n.host(), n.port())).toList();
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        throw new UnsupportedOperationException("a Cluster client reaches several addresses: see settingsThrough");
    }

    @Override
    protected Map<String, Object> settingsThrough(TcpProxy proxy) {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.endpoints", "redis-cluster://" + cluster().nodes().stream()
                .map(n -> "127.0.0.1:" + proxy.portFor(n.host(), n.port())).collect(Collectors.joining(",")));
        s.put("warden.lock.redis.address-map", cluster().nodes().stream()
                .map(n -> n.host() + ":" + n.port() + "=127.0.0.1:" + proxy.portFor(n.host(), n.port()))
                .collect(Collectors.joining(",")));
        return s;
    }

    @Override
    protected String unreachableEndpoints() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "redis-cluster://127.0.0.1:" + s.getLocalPort();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return Long.valueOf(1).equals(cluster().command(key(namespace, name), "EXISTS", key(namespace, name)));
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        cluster().command(key(namespace, name), "DEL", key(namespace, name));
    }

    @Override
    protected void pauseServer() {
        cluster().pauseAll();
    }

    @Override
    protected void resumeServer() {
        cluster().resumeAll();
    }
}
