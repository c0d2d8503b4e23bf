package dev.warden.lock.migration;

import dev.warden.lock.etcd.internal.Keys;
import dev.warden.testkit.EtcdServer;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.function.Supplier;

/** An etcd member of testkit's; a lock is the queue under {@link Keys#queuePrefix}. */
record EtcdSide(Supplier<EtcdServer> server) implements Side {

    @Override
    public Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "etcd", "warden.lock.endpoints", server.get().endpoints());
    }

    @Override
    public boolean hasState(String namespace, String name) {
        return server.get().count(Keys.queuePrefix(namespace, name)) > 0;
    }

    @Override
    public void remove(String namespace, String name) {
        server.get().deletePrefix(Keys.queuePrefix(namespace, name));
    }

    @Override
    public InetSocketAddress address() {
        return new InetSocketAddress(server.get().host(), server.get().port());
    }

    @Override
    public String endpointsThrough(int port) {
        return "etcd://127.0.0.1:" + port;
    }

    @Override
    public String unreachable() {
        return "etcd://127.0.0.1:" + Ports.free();
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
