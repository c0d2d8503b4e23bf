package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Picks loopback ports the kernel reports as free; a caller that loses the race retries. */
public final class FreePorts {

    private FreePorts() {
    }

    /** A Redis Cluster node's bus listens on its port + 10000. */
    public static final int CLUSTER_BUS_OFFSET = 10_000;

    /** A port on 127.0.0.1 that was free a moment ago. */
    public static int find() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free loopback port", e);
        }
    }

    /**
     * A port on 127.0.0.1 that was free a moment ago, and whose cluster bus port (+10000) was too, so
     * a Redis Cluster node can listen on both.
     */
    public static int findWithClusterBus() {
        for (int attempt = 0; attempt < 100; attempt++) {
            int port = find();
            if (port + CLUSTER_BUS_OFFSET > 65_535) {
                continue;
            }
            try (ServerSocket bus = new ServerSocket(port + CLUSTER_BUS_OFFSET, 1, InetAddress.getLoopbackAddress())) {
                return port;
            } catch (IOException taken) {
                // try another
            }
        }
        throw new IllegalStateException("cannot find a free loopback port whose port + " + CLUSTER_BUS_OFFSET + " is free too");
    }
}
