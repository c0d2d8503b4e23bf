package dev.warden.lock.migration;

import dev.warden.testkit.ZooKeeperServer;

import java.net.InetSocketAddress;
import java.util.Map;
import java.util.function.Supplier;

/** A ZooKeeper server of testkit's, read through {@link ZooKeeperNodes}. */
record ZooKeeperSide(Supplier<ZooKeeperServer> server, Supplier<ZooKeeperNodes> nodes) implements Side {

    @Override
    public Map<String, Object> settings() {
        return Map.of("warden.lock.backend", "zookeeper", "warden.lock.endpoints", server.get().endpoint());
    }

    @Override
    public boolean hasState(String namespace, String name) {
        return !nodes.get().contenders(namespace, name).isEmpty();
    }

    @Override
    public void remove(String namespace, String name) {
        nodes.get().removeContenders(namespace, name);
    }

    @Override
    public InetSocketAddress address() {
        return new InetSocketAddress(server.get().host(), server.get().port());
    }

    @Override
    public String endpointsThrough(int port) {
        return "zookeeper://127.0.0.1:" + port;
    }

    @Override
    public String unreachable() {
        return "zookeeper://127.0.0.1:" + Ports.free();
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
