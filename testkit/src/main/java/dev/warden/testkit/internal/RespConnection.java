package dev.warden.testkit.internal;

import dev.warden.testkit.RedisReplyException;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A minimal RESP2 client over a plain socket, so testkit can read a server directly without
 * depending on the client library under test. Every read and connect is bounded by a timeout, so a
 * paused server makes a call fail instead of hanging.
 */
public final class RespConnection implements AutoCloseable {

    private final String address;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RespConnection(String address, Socket socket) throws IOException {
        this.address = address;
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /** Connects with {@code timeout} as both connect and read timeout. */
    public static RespConnection open(String host, int port, Duration timeout) {
        int millis = Math.toIntExact(Math.max(1, timeout.toMillis()));
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), millis);
            socket.setSoTimeout(millis);
            socket.setTcpNoDelay(true);
            return new RespConnection(host + ":" + port, socket);
        } catch (IOException e) {
            closeQuietly(socket);
            throw new UncheckedIOException("cannot connect to " + host + ":" + port + ": " + e.getMessage(), e);
        }
    }

    /** Opens a connection, sends one command, and closes it. */
    public static Object callOnce(String host, int port, Duration timeout, String... args) {
        try (RespConnection connection = open(host, port, timeout)) {
            return connection.call(args);
        }
    }

    /** {@code true} when the server answers PING with PONG within {@code timeout}. */
    public static boolean answersPong(String host, int port, Duration timeout) {
        try {
            return "PONG".equals(callOnce(host, port, timeout, "PING"));
        } catch (UncheckedIOException | RedisReplyException e) {
            return false;
        }
    }

    /**
     * Sends one command and returns its reply: {@link String} for simple and bulk strings,
     * {@link Long} for integers, an unmodifiable {@link List} for arrays, {@code null} for nil. A
     * top-level error reply is thrown as {@link RedisReplyException}; an error nested in an array is
     * returned as a {@link RedisReplyException} element.
     */
    public Object call(String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("a command needs at least its name");
        }
        Object reply;
        try {
            out.write(encode(args));
            out.flush();
            reply = read();
        } catch (IOException e) {
            throw new UncheckedIOException(args[0] + " to " + address + " failed: " + e.getMessage(), e);
        }
        if (reply instanceof RedisReplyException error) {
            throw error;
        }
        return reply;
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static byte[] encode(String... args) {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        writeAscii(buffer, "*" + args.length + "\r\n");
        for (String arg : args) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            writeAscii(buffer, "$" + bytes.length + "\r\n");
            buffer.writeBytes(bytes);
            writeAscii(buffer, "\r\n");
        }
        return buffer.toByteArray();
    }

    private static void writeAscii(ByteArrayOutputStream buffer, String text) {
        buffer.writeBytes(text.getBytes(StandardCharsets.US_ASCII));
    }

    private Object read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed by peer");
        }
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                return new RedisReplyException(line);
            case ':':
                return Long.parseLong(line);
            case '$':
                return readBulk(Integer.parseInt(line));
            case '*':
                return readArray(Integer.parseInt(line));
            default:
                throw new IOException("unexpected RESP type '" + (char) type + "' followed by " + line);
        }
    }

    private String readBulk(int length) throws IOException {
        if (length < 0) {
            return null;
        }
        byte[] bytes = in.readNBytes(length);
        if (bytes.length < length) {
            throw new EOFException("connection closed inside a bulk string");
        }
        if (!readLine().isEmpty()) {
            throw new IOException("bulk string longer than its declared length " + length);
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private List<Object> readArray(int size) throws IOException {
        if (size < 0) {
            return null;
        }
        List<Object> items = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            items.add(read());
        }
        return Collections.unmodifiableList(items);
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("connection closed inside a reply");
            }
            if (b == '\r') {
                if (in.read() != '\n') {
                    throw new IOException("malformed RESP line: CR without LF");
                }
                return line.toString(StandardCharsets.UTF_8);
            }
            line.write(b);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // Nothing useful to do: the connection is being discarded either way.
        }
    }
}
