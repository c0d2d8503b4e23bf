package dev.warden.adopters.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/** {@code redis-server} on a free loopback port, no persistence. */
public final class RedisServer extends ChildServer {

    private final int port;

    private RedisServer(int port) {
        super(List.of(Binaries.find("redis-server", "apt-get install -y redis-server").toString(),
                "--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
                Binaries.tempDir("adopter-redis"));
        this.port = port;
    }

    public static RedisServer start() {
        return Binaries.startWithRetry(() -> {
            RedisServer server = new RedisServer(Binaries.freePorts(1)[0]);
            server.awaitReady("redis-server on port " + server.port, Duration.ofSeconds(20), server::pong);
            return server;
        });
    }

    /** {@code redis://127.0.0.1:<port>} */
    public String uri() {
        return "redis://127.0.0.1:" + port;
    }

    private boolean pong() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 200);
            socket.setSoTimeout(500);
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = in.readNBytes(7);
            return new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }
}
