package dev.warden.testkit.internal;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * ZooKeeper's four-letter-word admin commands ({@code srvr}, {@code stat}, {@code mntr}, ...) over a
 * fresh socket: the server answers and closes the connection.
 */
public final class FourLetterWords {

    private FourLetterWords() {
    }

    /**
     * Sends {@code word} and returns everything the server wrote before closing.
     *
     * @throws UncheckedIOException if the server cannot be reached or does not answer within
     *     {@code timeout} (a paused server accepts the connection and never answers)
     */
    public static String send(String host, int port, String word, Duration timeout) {
        if (word.length() != 4) {
            throw new IllegalArgumentException("a four-letter word has four letters: '" + word + "'");
        }
        int millis = (int) Math.max(1, timeout.toMillis());
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            socket.getOutputStream().write(word.getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream reply = new ByteArrayOutputStream();
            byte[] buffer = new byte[4096];
            int read;
            while ((read = in.read(buffer)) >= 0) {
                reply.write(buffer, 0, read);
            }
            return reply.toString(StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("ZooKeeper at " + host + ":" + port + " did not answer '" + word
                    + "' within " + millis + " ms: " + e.getMessage(), e);
        }
    }

    /**
     * The server's mode from {@code srvr} ({@code standalone}, {@code leader}, {@code follower},
     * {@code observer}), or empty when it does not answer or is not serving requests yet. A server
     * answers {@code ruok} before it serves, so readiness is judged on {@code srvr}.
     */
    public static Optional<String> mode(String host, int port, Duration timeout) {
        String reply;
        try {
            reply = send(host, port, "srvr", timeout);
        } catch (UncheckedIOException e) {
            return Optional.empty();
        }
        for (String line : reply.split("\n")) {
            if (line.startsWith("Mode: ")) {
                return Optional.of(line.substring("Mode: ".length()).trim());
            }
        }
        return Optional.empty();
    }
}
