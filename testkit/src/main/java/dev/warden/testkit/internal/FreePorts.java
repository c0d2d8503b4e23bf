package dev.warden.testkit.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Picks loopback ports the kernel reports as free; a caller that loses the race retries. */
public final class FreePorts {

    private FreePorts() {
    }

    /** A port on 127.0.0.1 that was free a moment ago. */
    public static int find() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free loopback port", e);
        }
    }
}
