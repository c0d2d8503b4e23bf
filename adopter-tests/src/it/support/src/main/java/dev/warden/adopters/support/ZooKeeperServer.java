package dev.warden.adopters.support;

import org.apache.zookeeper.server.ServerCnxnFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;

/**
 * A standalone ZooKeeper server in this JVM, from the ZooKeeper jar the user's lock-zookeeper
 * brings (provided here: nothing is added to the user's class path). The server, unlike the client,
 * also needs metrics-core and snappy-java, which ZooKeeper marks provided: a project that starts one
 * adds both in test scope.
 */
public final class ZooKeeperServer implements AutoCloseable {

    private final Path dir;
    private final org.apache.zookeeper.server.ZooKeeperServer server;
    private final ServerCnxnFactory connections;

    private ZooKeeperServer(Path dir) throws IOException, InterruptedException {
        this.dir = dir;
        this.server = new org.apache.zookeeper.server.ZooKeeperServer(dir.toFile(), dir.toFile(), 2000);
        this.connections = ServerCnxnFactory.createFactory(new InetSocketAddress("127.0.0.1", 0), 100);
        connections.startup(server);
    }

    public static ZooKeeperServer start() {
        Path dir = Binaries.tempDir("adopter-zookeeper");
        try {
            return new ZooKeeperServer(dir);
        } catch (IOException e) {
            Binaries.delete(dir);
            throw new UncheckedIOException("cannot start ZooKeeper in process", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            Binaries.delete(dir);
            throw new IllegalStateException("interrupted while starting ZooKeeper", e);
        }
    }

    /** {@code zookeeper://127.0.0.1:<port>} */
    public String uri() {
        return "zookeeper://127.0.0.1:" + connections.getLocalPort();
    }

    @Override
    public void close() {
        connections.shutdown();
        server.shutdown();
        Binaries.delete(dir);
    }
}
