package dev.warden.lock.migration;

import dev.warden.testkit.RedisServer;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.function.Supplier;

/** A Redis server of testkit's; a lock's key is {@code {<namespace>:<name>}:lock}. */
record RedisSide(Supplier<RedisServer> server) implements Side {

    private String lockKey(String namespace, String name) {
        return "{" + namespace + ":" + name + "}:lock";
    }

    @Override
    public Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "redis", "warden.lock.endpoints", server.get().uri());
    }

    @Override
    public boolean hasState(String namespace, String name) {
        return Long.valueOf(1).equals(server.get().command("EXISTS", lockKey(namespace, name)));
    }

    @Override
    public void remove(String namespace, String name) {
        server.get().command("DEL", lockKey(namespace, name));
    }

    @Override
    public InetSocketAddress address() {
        return new InetSocketAddress(server.get().host(), server.get().port());
    }

    @Override
    public String endpointsThrough(int port) {
        return "redis://127.0.0.1:" + port;
    }

    @Override
    public String unreachable() {
        return "redis://127.0.0.1:" + Ports.free();
    }

    @Override
    public void pause() {
        server.get().pause();
    }

    @Override
    public void resume() {
        if (server.get().isPaused()) {
            server.get().resume();
        }
    }
}
