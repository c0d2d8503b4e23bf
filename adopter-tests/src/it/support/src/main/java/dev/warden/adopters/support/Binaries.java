package dev.warden.adopters.support;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Finding a server binary on PATH (or failing loudly), free ports, temporary directories. */
final class Binaries {

    private Binaries() {
    }

    /** The binary on PATH; a missing one is an error that says how to install it, never a skip. */
    static Path find(String name, String install) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                Path candidate = Path.of(dir, name);
                if (Files.isExecutable(candidate)) {
                    return candidate;
                }
            }
        }
        throw new IllegalStateException(name + " not found on PATH: the adopter tests run a real server."
                + " Install it: " + install);
    }

    /** {@code n} distinct free loopback ports (all held open until all are chosen). */
    static int[] freePorts(int n) {
        ServerSocket[] sockets = new ServerSocket[n];
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                sockets[i] = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ports[i] = sockets[i].getLocalPort();
            }
            return ports;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            for (ServerSocket socket : sockets) {
                if (socket != null) {
                    try {
                        socket.close();
                    } catch (IOException ignored) {
                        // closing a probe socket
                    }
                }
            }
        }
    }

    /**
     * Starts a server on fresh free ports, again (three tries in all) when it exits while starting: a
     * free port can be taken by another process between the probe and the server's bind.
     */
    static <S> S startWithRetry(java.util.function.Supplier<S> start) {
        ServerExited last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            try {
                return start.get();
            } catch (ServerExited e) {
                last = e;
            }
        }
        throw last;
    }

    /** A server process that exited while starting. */
    static final class ServerExited extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        ServerExited(String message) {
            super(message);
        }
    }

    static Path tempDir(String prefix) {
        try {
            return Files.createTempDirectory(prefix);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static void delete(Path dir) {
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // best effort: a temporary directory
        }
    }

    static String tail(Path log) {
        try {
            String text = Files.readString(log);
            return text.length() > 2000 ? text.substring(text.length() - 2000) : text;
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
