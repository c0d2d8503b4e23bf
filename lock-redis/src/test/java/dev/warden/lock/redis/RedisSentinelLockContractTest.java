package dev.warden.lock.redis;

import dev.warden.lock.tck.LockFaultContractTest;
import dev.warden.testkit.RedisSentinel;
import dev.warden.testkit.RedisSentinelExtension;
import dev.warden.testkit.RedisServer;
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
 * RedisLockContractTest's), on a Sentinel deployment (one primary, one replica, three
 * sentinels) launched for this class. "The server" of the fault clauses is the primary: paused, it
 * stays the primary (the sentinels wait 30 s before they call it down); a client cut off behind the
 * proxy reaches the sentinels and both data nodes only through it.
 */
@DisplayName("Redis backend on Sentinel")
class RedisSentinelLockContractTest extends LockFaultContractTest {

    @RegisterExtension
    static final RedisSentinelExtension redis = new RedisSentinelExtension();

    private static RedisSentinel deployment() {
        return redis.sentinel();
    }

    private static String key(String namespace, String name) {
        return "{" + namespace + ":" + name + "}:lock";
    }

    @Override
    protected Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", deployment().uri());
    }

    @Override
    protected InetSocketAddress serverAddress() {
        RedisServer primary = deployment().primary();
        return new InetSocketAddress(primary.host(), primary.port());
    }

    @Override
    protected List<InetSocketAddress> serverAddresses() {
        return deployment().allNodes().stream().map(n -> new InetSocketAddress(n.host(), n.port())).toList();
    }

    @Override
    protected String endpointsThrough(int proxyPort) {
        throw new UnsupportedOperationException("a Sentinel client reaches several addresses: see settingsThrough");
    }

    @Override
    protected Map<String, Object> settingsThrough(TcpProxy proxy) {
        Map<String, Object> s = new LinkedHashMap<>(settings());
        s.put("warden.lock.endpoints", "redis-sentinel://" + deployment().sentinels().stream()
                .map(n -> "127.0.0.1:" + proxy.portFor(n.host(), n.port())).collect(Collectors.joining(","))
                + "/" + RedisSentinel.MASTER_NAME);
        s.put("warden.lock.redis.address-map", deployment().dataNodes().stream()
                .map(n -> n.host() + ":" + n.port() + "=127.0.0.1:" + proxy.portFor(n.host(), n.port()))
                .collect(Collectors.joining(",")));
        return s;
    }

    @Override
    protected String unreachableEndpoints() {
        try (ServerSocket s = new ServerSocket(0)) {
            return "redis-sentinel://127.0.0.1:" + s.getLocalPort() + "/" + RedisSentinel.MASTER_NAME;
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    protected boolean hasServerState(String namespace, String name) {
        return Long.valueOf(1).equals(deployment().primary().command("EXISTS", key(namespace, name)));
    }

    @Override
    protected void removeBehindHoldersBack(String namespace, String name) {
        deployment().primary().command("DEL", key(namespace, name));
    }

    @Override
    protected void pauseServer() {
        deployment().primary().pause();
    }

    @Override
    protected void resumeServer() {
        deployment().resumeAll();
    }
}
